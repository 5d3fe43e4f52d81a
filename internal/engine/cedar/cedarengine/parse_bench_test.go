package cedarengine_test

import (
	"encoding/json"
	"testing"

	enginecedar "github.com/authzbench/authzbench/internal/engine/cedar"
	"github.com/authzbench/authzbench/internal/engine/cedar/cedarengine"
	"github.com/authzbench/authzbench/internal/workload"
)

// BenchmarkParseRequest is what cedar/server pays per request before deciding: reading the
// request document, with the entities docshare-N carries, into cedar-go's types.
func BenchmarkParseRequest(b *testing.B) {
	for _, name := range []string{"rbac", "docshare-5", "docshare-50"} {
		w, err := workload.Builtin(name)
		if err != nil {
			b.Fatal(err)
		}
		var e cedarengine.Engine
		body := enginecedar.Engine.Request(w.Inputs[0])
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if _, err := e.ParseRequest(body); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/json-any", func(b *testing.B) {
			for b.Loop() {
				var v any
				if err := json.Unmarshal(body, &v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
