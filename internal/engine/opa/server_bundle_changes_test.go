package opa

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/authzbench/authzbench/internal/change"
	"github.com/authzbench/authzbench/internal/engine"
	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/verify"
	"github.com/authzbench/authzbench/internal/workload"
)

// Given the workload as a bundle, opa/server takes each change of rbac's stream as a bundle
// revision its bundle plugin downloads by long polling and activates: once the write is
// acknowledged, every decision names the change's revision in its provenance and decides every
// input as the reference model does at that version; a revocation is never seen stale.
//
// As snapshots, the stream ends with a policy replacement (a module that denies everything in
// place of rbac's), which a delta bundle cannot carry.
func TestBundleChangesSeenOnceActive(t *testing.T) {
	for _, mode := range []string{snapshotChanges, deltaChanges} {
		t.Run(mode, func(t *testing.T) { testBundleChanges(t, mode) })
	}
}

func testBundleChanges(t *testing.T, mode string) {
	w := builtin(t, "rbac", 400)
	made, err := workload.BuiltinChanges(w, 6)
	if err != nil {
		t.Fatal(err)
	}
	cs := make([]change.Change, len(made))
	expects := make([]workload.Expect, len(w.Inputs))
	for i, in := range w.Inputs {
		expects[i] = in.Expect
	}
	for k, c := range made {
		form, err := engine.WriteFor(Name, w, c)
		if err != nil {
			t.Fatal(err)
		}
		cs[k] = change.Change{Source: c.What, Sets: c.Sets, Form: form}
	}
	if mode == snapshotChanges {
		dir := t.TempDir()
		pkg := strings.TrimSuffix(strings.TrimPrefix(w.Query, "data."), ".allow")
		if err := os.WriteFile(filepath.Join(dir, "deny.rego"), []byte("package "+pkg+"\n\ndefault allow := false\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		form, err := engine.ResolveWriteFor(Name, w, []byte(`{"policy": "deny.rego"}`), dir)
		if err != nil {
			t.Fatal(err)
		}
		denyAll := change.Change{Source: "deny all", Sets: map[int]bool{}, Form: form}
		for i, e := range expects {
			if e != workload.Unverified {
				denyAll.Sets[i] = false
			}
		}
		cs = append(cs, denyAll)
	}
	stream, err := change.NewStream(expects, cs)
	if err != nil {
		t.Fatal(err)
	}
	tg := startTarget(t, "opa/server", kinds.Common{Workers: 1}, &ServerConfig{BundleConfig: BundleConfig{BundleServer: true, Provenance: true, BundleChanges: mode}}, w)
	if info := tg.Info(); info.Consistency == nil || info.Consistency.PromiseMS != 0 || info.Bundle == nil || !strings.Contains(info.Bundle.Polling, "long polling") {
		t.Errorf("consistency %+v, bundle %+v: want the bundle's promise (none stale after the acknowledgement) and its long polling recorded", info.Consistency, info.Bundle)
	}
	applier, err := kinds.WriterOf(tg)
	if err != nil {
		t.Fatal(err)
	}
	p, ok := applier.(change.Preparer)
	if !ok {
		t.Fatalf("the bundle's applier %T builds no revisions before the run", applier)
	}
	if err := p.Prepare(context.Background(), stream.Changes); err != nil {
		t.Fatal(err)
	}
	d := tg.Worker()
	defer kinds.CloseDecider(d)
	check := func(version int) (revoked int) {
		for i := range w.Inputs {
			if !stream.Verified(i) {
				continue
			}
			out := d.Decide(context.Background(), i)
			if out.Kind != verify.Decided || !out.Versioned {
				t.Fatalf("version %d, input %d: %v %v (versioned %v): want a decision naming its revision", version, i+1, out.Kind, out.Err, out.Versioned)
			}
			if int(out.Version) != version || out.Allow != stream.Allowed(i, version) {
				t.Errorf("version %d, input %d: revision %d decided %v; want revision %d deciding %v", version, i+1, out.Version, out.Allow, version, stream.Allowed(i, version))
			}
			if version > 0 && stream.Allowed(i, version-1) && !stream.Allowed(i, version) {
				revoked++
			}
		}
		return revoked
	}
	check(0)
	revocations := 0
	for k := 1; k <= stream.Len(); k++ {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		ack := applier.Apply(ctx, k, stream.Changes[k-1])
		cancel()
		if ack.Class != "" || ack.Err != nil {
			t.Fatalf("change %d (%s): %s %v", k, stream.Changes[k-1].Source, ack.Class, ack.Err)
		}
		revocations += check(k)
	}
	if revocations == 0 {
		t.Fatal("no change revoked a decision: the test shows nothing of a revocation")
	}
	srv := tg.(*server).revisions
	srv.mu.Lock()
	files, err := filesOf(srv.tarballs[1])
	srv.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	delta := slices.ContainsFunc(files, func(f bundleFile) bool { return f.name == "patch.json" })
	if delta != (mode == deltaChanges) {
		t.Errorf("%s: revision 1 holds %v", mode, files)
	}
}

// A change OPA would refuse is refused as the revisions are built, before the run, naming it.
func TestBundleChangesRefusedBeforeTheRun(t *testing.T) {
	w := builtin(t, "rbac", 20)
	tg := startTarget(t, "opa/server", kinds.Common{Workers: 1}, &ServerConfig{BundleConfig: BundleConfig{BundleServer: true}}, w)
	applier, err := kinds.WriterOf(tg)
	if err != nil {
		t.Fatal(err)
	}
	bad := []change.Change{{Source: "changes.jsonl:1", Form: []byte(`[{"op": "replace", "path": "/no/such/path", "value": 1}]`)}}
	err = applier.(change.Preparer).Prepare(context.Background(), bad)
	if err == nil || !strings.Contains(err.Error(), "changes.jsonl:1") || !strings.Contains(err.Error(), "/no/such/path") {
		t.Errorf("prepare: %v; want the line and the path refused", err)
	}
	// A delta bundle carries data alone: a policy replacement is refused before any load.
	delta := &ServerConfig{BundleConfig: BundleConfig{BundleServer: true, BundleChanges: deltaChanges}}
	policy := []byte(`{"policy": "p.rego", "module": "package rbac"}`)
	if err := delta.CheckWriteForm(policy); err == nil || !strings.Contains(err.Error(), "delta bundle") {
		t.Errorf("policy as a delta: %v", err)
	}
	if err := delta.CheckWriteForm(bad[0].Form); err != nil {
		t.Errorf("a data patch as a delta: %v", err)
	}
	if err := (&ServerConfig{BundleConfig: BundleConfig{BundleChanges: deltaChanges}}).Check(); err == nil || !strings.Contains(err.Error(), "give it with bundle_server") {
		t.Errorf("bundle_changes without a bundle: %v", err)
	}
	// Optimized: the optimizer folded the data into the policy; refused before anything starts.
	if err := kinds.WritesRefused("opa/server", &ServerConfig{BundleConfig: BundleConfig{Optimize: 1}}); err == nil || !strings.Contains(err.Error(), "-O=1") {
		t.Errorf("optimized bundle: %v; want its changes refused", err)
	}
	if err := (&ServerConfig{BundleConfig: BundleConfig{Provenance: true}}).Check(); err == nil || !strings.Contains(err.Error(), "provenance names the bundle revision behind each decision: give it with bundle_server") {
		t.Errorf("provenance without a bundle: %v", err)
	}
}

// The bundle server long-polls as OPA asks: a download naming the revision served is held until
// another is published, then answered with it; one naming another revision is answered at once;
// a held download whose wait passes gets 304.
func TestRevisionServerLongPolls(t *testing.T) {
	s := newRevisionServer([]byte("zero"))
	s.add([]byte("one"))
	srv := httptest.NewServer(s)
	defer srv.Close()
	get := func(etag, prefer string) (*http.Response, string, time.Duration) {
		req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
		req.Header.Set("If-None-Match", etag)
		req.Header.Set("Prefer", prefer)
		start := time.Now()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp, string(b), time.Since(start)
	}
	resp, body, _ := get("", "modes=snapshot,delta;wait=30")
	if resp.StatusCode != 200 || body != "zero" || resp.Header.Get("ETag") != `"0"` || resp.Header.Get("Content-Type") != "application/vnd.openpolicyagent.bundles" {
		t.Fatalf("first download: %d %q %v", resp.StatusCode, body, resp.Header)
	}
	go func() {
		time.Sleep(300 * time.Millisecond)
		s.publish(1)
	}()
	resp, body, took := get(`"0"`, "modes=snapshot,delta;wait=30")
	if resp.StatusCode != 200 || body != "one" || resp.Header.Get("ETag") != `"1"` || took < 250*time.Millisecond || took > 20*time.Second {
		t.Errorf("held download: %d %q after %v; want revision 1 once published", resp.StatusCode, body, took)
	}
	if resp, _, took := get(`"1", "0"`, "wait=1"); resp.StatusCode != http.StatusNotModified || took < 900*time.Millisecond {
		t.Errorf("held download with nothing new: %d after %v; want 304 once its wait passed", resp.StatusCode, took)
	}
	if resp, _, _ := get(`"1"`, ""); resp.StatusCode != http.StatusNotModified {
		t.Errorf("a plain poll of the revision served: %d, want 304 at once", resp.StatusCode)
	}
	if err := s.publish(2); err == nil {
		t.Error("a revision never built was published")
	}

	// Deltas in sequence: a download behind by two is answered the next one, then the last;
	// one naming none gets the snapshot, revision 0.
	d := newRevisionServer([]byte("zero"))
	d.sequential = true
	d.add([]byte("one"))
	d.add([]byte("two"))
	if err := d.publish(2); err != nil {
		t.Fatal(err)
	}
	srv = httptest.NewServer(d)
	defer srv.Close()
	for _, c := range []struct{ held, want, etag string }{{"", "zero", `"0"`}, {`"0"`, "one", `"1"`}, {`"1", "0"`, "two", `"2"`}} {
		if resp, body, _ := get(c.held, "wait=30"); resp.StatusCode != 200 || body != c.want || resp.Header.Get("ETag") != c.etag {
			t.Errorf("deltas, holding %s: %d %q %s; want %q", c.held, resp.StatusCode, body, resp.Header.Get("ETag"), c.want)
		}
	}
}
