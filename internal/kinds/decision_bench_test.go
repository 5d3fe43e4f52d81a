package kinds

import "testing"

// BenchmarkDecisionRead reads the answers a served target gets most, and one the exact bodies
// do not cover, with a warm reader as a worker holds one: the parse cost per response.
func BenchmarkDecisionRead(b *testing.B) {
	for _, bc := range []struct{ name, body, version string }{
		{"opa_allow", "{\"result\":true}\n", ""},
		{"opa_deny", "{\"result\":false}\n", ""},
		{"opa_with_timers", `{"metrics":{"timer_rego_query_eval_ns":2500,"timer_server_handler_ns":9100},"result":true}`, ""},
		{"opa_object", `{"result":{"allow":false,"reasons":["not owner"]}}`, ""},
		// OPA's answer with its provenance (--provenance), the bundle's revision read as the version.
		{"opa_provenance", provenanceBody, "/provenance/bundles/authzbench/revision"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			r, body := newDecisionReader("result"), []byte(bc.body)
			if bc.version != "" {
				r.version, r.versionPath = jsonPointer(bc.version), bc.version
			}
			b.ReportAllocs()
			for b.Loop() {
				if out := r.read(body); out.Err != nil {
					b.Fatal(out.Err)
				}
			}
		})
	}
}

// provenanceBody is OPA v1.22's answer to a decision asked with ?provenance=true.
const provenanceBody = `{"provenance":{"version":"1.22.2","build_commit":"","build_timestamp":"","build_hostname":"","bundles":{"authzbench":{"revision":"3"}}},"result":true}` + "\n"
