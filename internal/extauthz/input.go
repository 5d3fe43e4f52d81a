package extauthz

import (
	"encoding/base64"
	"strings"
)

// BasicUser is the user named by the request's "Authorization: Basic ..." header, "" when it
// names none.
func BasicUser(h map[string]string) string {
	scheme, encoded, ok := strings.Cut(h["authorization"], " ")
	if !ok || !strings.EqualFold(scheme, "basic") {
		return ""
	}
	b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(encoded))
	if err != nil {
		return ""
	}
	user, _, _ := strings.Cut(string(b), ":")
	return user
}
