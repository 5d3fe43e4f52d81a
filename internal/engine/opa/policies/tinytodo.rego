# tinytodo: task lists shared with readers and editors. The world is data (data.tinytodo); a
# request names the user, the action and the list.
#
# A list's owner may do anything with it, but deleting a list takes a job level of 2 or more:
# interns may not, even their own. Editors, named on the list directly or through a team
# (teams nest), may read and update the list and create and update its tasks. Readers may read
# the list.
package authzbench.tinytodo

default allow := false

list := data.tinytodo.lists[input.resource]

user := data.tinytodo.users[input.user]

# The user and every team it is in, directly or through teams inside teams.
principals := {input.user} | graph.reachable(data.tinytodo.team_parents, user.teams)

owner if list.owner == input.user

editor if owner

editor if {
	some p in list.editors
	p in principals
}

reader if editor

reader if {
	some p in list.readers
	p in principals
}

allow if {
	input.action == "get_list"
	reader
}

allow if {
	input.action in {"update_list", "create_task", "update_task"}
	editor
}

allow if {
	input.action == "delete_list"
	owner
	user.job_level >= 2
}
