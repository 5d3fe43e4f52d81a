# docshare: document sharing where every request carries its own entities, in the manner of
# Cedar's document-sharing application. input.entities maps "Type::id" to {"attrs", "parents"}:
# the user with the groups it belongs to (groups nest), the document with the folders above it
# (folders nest), and unrelated padding. The policy walks both hierarchies itself.
#
# input: {"principal": "User::...", "action": "view"|"edit"|"share"|"delete",
#         "resource": "Document::...", "entities": {...}}
package authzbench.docshare

default allow := false

allow if {
	not blocked
	not archived
	permitted
}

entities := input.entities

doc := entities[input.resource].attrs

# The parent edges of every entity the request carries.
edges := {id: e.parents | some id, e in entities}

# The user and every group it is in, directly or through nested groups.
principals := graph.reachable(edges, {input.principal})

# The document and every folder above it.
chain := graph.reachable(edges, {input.resource})

# A user on the document's blocked list may do nothing with it, whatever else grants.
blocked if input.principal in doc.blocked

# Documents anywhere under the archive folder are read-only, even for their owner; the owner
# may still delete them.
archived if {
	input.action in {"edit", "share"}
	"Folder::archive" in chain
}

# Owners may do anything else with their documents.
permitted if doc.owner == input.principal

# Anyone may view a public document.
permitted if {
	input.action == "view"
	doc.public
}

# Viewers and editors, named on the document or on a folder above it, may view.
permitted if {
	input.action == "view"
	viewer
}

permitted if {
	input.action in {"view", "edit"}
	editor
}

# Editors may share when the document is sharable.
permitted if {
	input.action == "share"
	doc.sharable
	editor
}

# The user, or a group it is in, is on the viewer or editor lists of the document or of a
# folder above it.
viewer if {
	some node in chain
	input.principal in entities[node].attrs.viewerUsers
}

viewer if {
	some node in chain
	some group in entities[node].attrs.viewerGroups
	group in principals
}

editor if {
	some node in chain
	input.principal in entities[node].attrs.editorUsers
}

editor if {
	some node in chain
	some group in entities[node].attrs.editorGroups
	group in principals
}
