package opa

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/authzbench/authzbench/internal/change"
	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/workload"
)

// Write is a built-in family's change as OPA takes it: the family's JSON Patch of the data
// document, sent as it is to the Data API (engine.Writer).
func (opa) Write(_ *workload.Workload, c workload.Change) (json.RawMessage, error) {
	return c.Patch, nil
}

// Writer applies each change with a PATCH of the server's data (kinds.Writable): OPA commits it
// to its store before it answers, 204; a policy replacement with a PUT of the module. A server
// given the workload as a bundle (bundle_server) takes each change as a bundle revision instead
// (bundleChanges): its bundle's roots are OPA's, and OPA refuses Data API writes under them.
func (t *server) Writer() (change.Applier, error) {
	if t.URL() == "" {
		return nil, errors.New("the OPA server is not started")
	}
	if t.revisions != nil {
		return t.bundleWriter()
	}
	return &dataPatcher{client: t.WriteClient(), url: t.URL() + "/v1/data",
		policies: &policyPutter{client: t.WriteClient(), base: t.URL()}}, nil
}

type dataPatcher struct {
	client *http.Client
	url    string
	// policies applies a changes file's policy replacements, with a PUT of the module.
	policies *policyPutter
}

func (p *dataPatcher) Apply(ctx context.Context, _ int, c change.Change) change.Ack {
	if isPolicyWrite(c.Form) {
		return p.policies.apply(ctx, c)
	}
	if len(c.Form) == 0 {
		return change.Ack{Class: "refused", Err: errors.New("the change has no JSON Patch of OPA's data")}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPatch, p.url, bytes.NewReader(c.Form))
	if err != nil {
		return change.Ack{Class: "refused", Err: err}
	}
	req.Header.Set("Content-Type", "application/json-patch+json")
	return kinds.SendWrite(p.client, req)
}
