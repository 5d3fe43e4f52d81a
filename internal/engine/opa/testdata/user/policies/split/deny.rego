package shared

deny if input.user == "mallory"
