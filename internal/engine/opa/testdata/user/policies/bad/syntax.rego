package broken

allow if {
