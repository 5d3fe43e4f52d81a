package kinds

import "testing"

// BenchmarkDecisionRead reads the answers a served target gets most, and one the exact bodies
// do not cover, with a warm reader as a worker holds one: the parse cost per response.
func BenchmarkDecisionRead(b *testing.B) {
	for _, bc := range []struct{ name, body string }{
		{"opa_allow", "{\"result\":true}\n"},
		{"opa_deny", "{\"result\":false}\n"},
		{"opa_with_timers", `{"metrics":{"timer_rego_query_eval_ns":2500,"timer_server_handler_ns":9100},"result":true}`},
		{"opa_object", `{"result":{"allow":false,"reasons":["not owner"]}}`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			r, body := newDecisionReader("result"), []byte(bc.body)
			b.ReportAllocs()
			for b.Loop() {
				if out := r.read(body); out.Err != nil {
					b.Fatal(out.Err)
				}
			}
		})
	}
}
