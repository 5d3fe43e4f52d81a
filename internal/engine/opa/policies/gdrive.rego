# gdrive: documents in nested folders, shared with users and nested groups. The world is data
# (data.gdrive); a request names the user, the action and the document.
#
# Whoever owns the document or any folder above it manages it: they may do anything. Editors
# and viewers named on the document or on any folder above it, directly or through a group
# (groups nest), inherit down the folders. Editors may read and write, and share when the
# document lets editors share. Viewers may read. Anyone may read a document shared by link.
package authzbench.gdrive

default allow := false

doc := data.gdrive.docs[input.resource]

# The document's folder and every folder above it.
folders := graph.reachable(data.gdrive.folder_parents, [doc.folder])

# The user and every group it is in, directly or through groups inside groups.
principals := {input.user} | graph.reachable(data.gdrive.group_parents, object.get(data.gdrive.user_groups, input.user, []))

manager if doc.owner == input.user

manager if {
	some f in folders
	data.gdrive.folders[f].owner == input.user
}

# granted(list) is true when the document's list, or the same list on a folder above it, names
# the user or one of its groups.
granted(list) if {
	some p in doc[list]
	p in principals
}

granted(list) if {
	some f in folders
	some p in data.gdrive.folders[f][list]
	p in principals
}

editor if manager

editor if granted("editors")

viewer if editor

viewer if granted("viewers")

allow if {
	input.action == "read"
	viewer
}

allow if {
	input.action == "read"
	doc.public
}

allow if {
	input.action == "write"
	editor
}

allow if {
	input.action == "share"
	manager
}

allow if {
	input.action == "share"
	editor
	doc.editors_can_share
}

allow if {
	input.action == "delete"
	manager
}
