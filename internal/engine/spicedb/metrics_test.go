package spicedb

import (
	"bytes"
	"log"
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/authzbench/authzbench/internal/report"
	"github.com/authzbench/authzbench/internal/result"
)

// SpiceDB's init replaces the Go collector of Prometheus's default registry and sets zerolog's
// default context logger to a no-op. authzbench's OpenMetrics export writes its own text from a
// result and touches neither: in this test binary, which links SpiceDB, it is byte for byte
// what a binary without SpiceDB wrote (testdata/expected.openmetrics, rendered by one from the
// same committed result).
func TestOwnMetricsUnaffected(t *testing.T) {
	doc, err := result.Read("../../../docs/results/pin-apart-round2-2026-11-23.json")
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	if err := report.Prometheus(&got, doc); err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("testdata/expected.openmetrics")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Errorf("OpenMetrics export with SpiceDB linked differs from the one without:\n%s", got.String())
	}
	if strings.Contains(got.String(), "\ngo_") {
		t.Error("the export carries the Go collector's series")
	}
}

// authzbench writes its messages with fmt, log and slog, never zerolog: SpiceDB's no-op zerolog
// default must leave them writing.
func TestOwnLogsUnaffected(t *testing.T) {
	var buf bytes.Buffer
	defer log.SetOutput(log.Writer())
	log.SetOutput(&buf)
	log.Print("from log")
	defer slog.SetDefault(slog.Default())
	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, nil)))
	slog.Info("from slog")
	for _, line := range []string{"from log", "from slog"} {
		if !strings.Contains(buf.String(), line) {
			t.Errorf("%q not written; got %q", line, buf.String())
		}
	}
}
