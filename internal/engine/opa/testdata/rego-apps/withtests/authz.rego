package withtests

default allow := false

allow if input.user in data.owners[input.doc]
