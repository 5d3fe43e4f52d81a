package opa

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"
	"google.golang.org/protobuf/encoding/protojson"
)

// envoyInput is the policy input for a check, shaped as OPA-Envoy shapes it, so that a policy
// written for OPA-Envoy runs unchanged: "attributes" is the CheckRequest's attributes in
// protojson's names (request.http.method, source.address.socketAddress ...); "parsed_path" is
// the path's segments, "parsed_query" its query as lists of values, and "parsed_body" the body
// when it is JSON.
func envoyInput(req *authv3.CheckRequest) (map[string]any, error) {
	b, err := protojson.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("encode the CheckRequest as JSON: %w", err)
	}
	var input map[string]any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&input); err != nil {
		return nil, fmt.Errorf("decode the CheckRequest's JSON: %w", err)
	}
	if input == nil {
		input = map[string]any{}
	}
	h := req.GetAttributes().GetRequest().GetHttp()
	path, query, _ := strings.Cut(h.GetPath(), "?")
	segments := []any{}
	if p, err := url.PathUnescape(path); err == nil {
		path = p
	}
	for _, s := range strings.Split(strings.TrimLeft(path, "/"), "/") {
		segments = append(segments, s)
	}
	input["parsed_path"] = segments
	parsedQuery := map[string]any{}
	if values, err := url.ParseQuery(query); err == nil {
		for k, vs := range values {
			list := make([]any, len(vs))
			for i, v := range vs {
				list[i] = v
			}
			parsedQuery[k] = list
		}
	}
	input["parsed_query"] = parsedQuery
	body := h.GetBody()
	if body == "" && len(h.GetRawBody()) > 0 {
		body = string(h.GetRawBody())
	}
	if body != "" && strings.Contains(h.GetHeaders()["content-type"], "json") {
		var parsed any
		dec := json.NewDecoder(strings.NewReader(body))
		dec.UseNumber()
		if dec.Decode(&parsed) == nil {
			input["parsed_body"] = parsed
		}
	}
	return input, nil
}
