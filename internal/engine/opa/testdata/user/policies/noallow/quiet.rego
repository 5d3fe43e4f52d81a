package quiet

permit := true
