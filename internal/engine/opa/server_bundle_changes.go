package opa

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/bundle"
	"github.com/open-policy-agent/opa/v1/storage"
	"github.com/open-policy-agent/opa/v1/storage/inmem"

	"github.com/authzbench/authzbench/internal/change"
	"github.com/authzbench/authzbench/internal/kinds"
)

// Bundle changes: with bundle_server, a run whose world changes publishes each change as a new
// revision of the workload's bundle, the whole world at that version (a snapshot bundle) or the
// change alone (a delta bundle, bundle_changes delta), which OPA's bundle plugin downloads by
// HTTP long polling and activates, as OPA runs beside a bundle service in production. The revision is the version: "0" as the run starts, "k" after the k-th
// change, so that OPA's provenance (provenance) names the version each decision was made at.

func init() {
	kinds.DeclareOption(kinds.Option{Key: "bundle_changes", Flag: "bundle-changes", Selective: true,
		Help: "{kinds}, with --bundle-server and --changes: publish each change as a snapshot bundle of the whole world at its version (snapshot, the default) or as a delta bundle of the change's JSON Patch alone (delta: data only, no policy replacement)"})
	kinds.DeclareOption(kinds.Option{Key: "provenance", Flag: "provenance", Selective: true,
		Help: "{kinds}, with --bundle-server: ask every decision for OPA's provenance (?provenance=true), whose bundle revision names the version of the world it was made at; with --changes each answer is judged by it exactly. OPA reads the revisions in each decision's transaction and answers a longer body, which the generator parses"})
}

// What bundle_changes takes.
const (
	snapshotChanges = "snapshot"
	deltaChanges    = "delta"
)

// CheckWriteForm refuses, before any load (kinds.WriteFormChecker), a policy replacement for a
// server given its changes as delta bundles: a delta bundle carries data alone.
func (c *ServerConfig) CheckWriteForm(form json.RawMessage) error {
	if c.BundleChanges == deltaChanges && isPolicyWrite(form) {
		return errors.New("a policy replacement cannot be published as a delta bundle (OPA's delta bundles carry data alone): give --bundle-changes snapshot")
	}
	return nil
}

// WithoutChanges refuses --bundle-changes in a run whose world does not change
// (kinds.ChangesOnly): it says how changes are published, and there would be none.
func (c *ServerConfig) WithoutChanges() error {
	if c.BundleChanges == "" {
		return nil
	}
	return kinds.NewOptionError("bundle_changes", func(n func(string) string) string {
		return fmt.Sprintf("%s says how a run's changes are published as bundle revisions: give it with --changes", n("bundle_changes"))
	})
}

// longPollSeconds is OPA's long_polling_timeout_seconds: how long authzbench's bundle server
// holds a download that names the revision it serves before it answers 304. A revision
// published meanwhile is answered at once, so the timeout only says how often an idle OPA asks
// again; an hour keeps a run without changes free of any poll, as the first activation is the
// one measured.
const longPollSeconds = 3600

// pollingRecord says, for the result, how OPA's bundle plugin learns of a new revision.
var pollingRecord = fmt.Sprintf("long polling (long_polling_timeout_seconds %d: a new revision is answered to the download OPA holds open)", longPollSeconds)

// revisionServer serves one bundle at its latest revision, as a bundle service that supports
// OPA's long polling does: the ETag names the revision; a download whose If-None-Match names it
// is held until another revision is published (answered with it) or the wait OPA asked for
// (Prefer: wait=N) has passed (304). Its answers say application/vnd.openpolicyagent.bundles,
// the type that tells OPA the server long-polls.
//
// Delta bundles are served in sequence (sequential): each applies to the revision before it, so a
// download naming revision j is answered with revision j+1, up to the one published, and one
// naming none with revision 0, the snapshot; OPA then asks again at once and catches up, as
// OPA's docs ask of a server of delta bundles. Snapshots are served latest first.
type revisionServer struct {
	mu       sync.Mutex
	current  int
	tarballs [][]byte // by revision; later ones added by prepare
	// changed is closed, and replaced, when a revision is published: held downloads wake.
	changed    chan struct{}
	sequential bool
}

func newRevisionServer(first []byte) *revisionServer {
	return &revisionServer{tarballs: [][]byte{first}, changed: make(chan struct{})}
}

// etagOf is revision k's ETag.
func etagOf(k int) string { return `"` + strconv.Itoa(k) + `"` }

// add adds the next revision's tarball.
func (s *revisionServer) add(tarball []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tarballs = append(s.tarballs, tarball)
}

// publish makes revision k the one served and wakes the downloads held.
func (s *revisionServer) publish(k int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if k < 0 || k >= len(s.tarballs) {
		return fmt.Errorf("revision %d was not built before the run (%d were)", k, len(s.tarballs)-1)
	}
	s.current = k
	close(s.changed)
	s.changed = make(chan struct{})
	return nil
}

func (s *revisionServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	wait := preferredWait(r.Header.Get("Prefer"))
	var expired <-chan time.Time
	if wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		expired = t.C
	}
	held := heldRevision(r.Header.Get("If-None-Match"))
	for {
		s.mu.Lock()
		k, changed := s.current, s.changed
		if s.sequential && held < k {
			k = held + 1
		}
		tarball := s.tarballs[k]
		s.mu.Unlock()
		etag := etagOf(k)
		w.Header().Set("Content-Type", "application/vnd.openpolicyagent.bundles")
		w.Header().Set("ETag", etag)
		if !namesETag(r.Header.Get("If-None-Match"), etag) {
			w.Write(tarball) //nolint:errcheck // OPA says so if it gets no bundle
			return
		}
		if expired == nil {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		select {
		case <-changed:
		case <-expired:
			w.WriteHeader(http.StatusNotModified)
			return
		case <-r.Context().Done():
			return
		}
	}
}

// heldRevision is the revision an If-None-Match header says OPA holds (the first ETag, its
// current one); -1 for none.
func heldRevision(header string) int {
	first, _, _ := strings.Cut(header, ",")
	n, err := strconv.Atoi(strings.Trim(strings.TrimSpace(first), `"`))
	if err != nil || n < 0 {
		return -1
	}
	return n
}

// preferredWait is the wait=N of a Prefer header (OPA's long poll); 0 without one.
func preferredWait(prefer string) time.Duration {
	for _, part := range strings.FieldsFunc(prefer, func(r rune) bool { return r == ';' || r == ',' }) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(part), "wait="); ok {
			if n, err := strconv.Atoi(v); err == nil && n > 0 {
				return time.Duration(n) * time.Second
			}
		}
	}
	return 0
}

// namesETag says whether an If-None-Match header (OPA sends its current ETag, then those it
// superseded) names etag.
func namesETag(header, etag string) bool {
	for _, e := range strings.Split(header, ",") {
		if strings.TrimSpace(e) == etag {
			return true
		}
	}
	return false
}

// serveRevisions serves s on loopback, /bundles/0.tar.gz; the server is the caller's to close.
func serveRevisions(s *revisionServer) (*http.Server, string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", fmt.Errorf("serve the workload's bundle to OPA: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /bundles/0.tar.gz", s)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln) //nolint:errcheck // ends with Close
	return srv, "http://" + ln.Addr().String(), nil
}

// maxRevisionBytes bounds the bundles a stream's revisions are built into before the run.
const maxRevisionBytes = 2 << 30

// bundleChanges applies a stream's changes to OPA's server as bundle revisions
// (change.Applier, change.Preparer). Prepare builds every revision before the clock: the world
// at that version (the workload's bundle with every change up to it applied: a data patch as
// OPA's store applies one, a policy replacement's module in place of the one it replaces), as
// a snapshot bundle. Apply publishes the revision and waits until OPA's server holds it.
//
// Acknowledged means active: OPA's store holds the revision (read from its Data API,
// data.system.bundles.<name>.manifest.revision, which the activation writes in the transaction
// that writes the bundle's policy and data). A decision begun after the acknowledgement reads
// the new world, as after a Data API PATCH; the write's latency is the revision's download and
// activation. The store is asked every ackEvery, so an acknowledgement is read up to that late:
// an answer of the revision before, sent in those milliseconds, is judged fresh.
type bundleChanges struct {
	server *revisionServer
	// delta publishes each change as a delta bundle of its patch alone (bundle_changes delta).
	delta bool
	// base is the workload's bundle as served at revision 0, read back from its tarball.
	base *bundle.Bundle
	v0   bool
	// client and revisionURL ask OPA's server for the active revision.
	client      *http.Client
	revisionURL string
}

// ackEvery is how often the writer asks OPA's server whether it holds the revision published.
const ackEvery = 5 * time.Millisecond

// Prepare builds revisions 1 to len(changes); a change OPA would refuse (a patch of a path that
// is not there, a module that does not compile beside the others) is refused here, naming it.
func (b *bundleChanges) Prepare(ctx context.Context, changes []change.Change) error {
	version := ast.RegoV1
	if b.v0 {
		version = ast.RegoV0
	}
	store := inmem.NewFromObjectWithOpts(b.base.Data, inmem.OptRoundTripOnWrite(false))
	modules := append([]bundle.ModuleFile(nil), b.base.Modules...)
	total := int64(len(b.server.tarballs[0]))
	for k, c := range changes {
		where := c.Source
		if where == "" {
			where = fmt.Sprintf("change %d", k+1)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if isPolicyWrite(c.Form) {
			if b.delta {
				return fmt.Errorf("%s: a policy replacement cannot be published as a delta bundle (OPA's delta bundles carry data alone)", where)
			}
			next, err := replaceBundleModule(modules, c.Form, version)
			if err != nil {
				return fmt.Errorf("%s as a bundle revision: %w", where, err)
			}
			modules = next
		} else if err := patchStore(ctx, store, c.Form); err != nil {
			return fmt.Errorf("%s as a bundle revision: %w", where, err)
		}
		var tarball []byte
		var err error
		if b.delta {
			tarball, err = deltaOf(c.Form, b.base.Manifest, k+1, b.v0)
		} else {
			tarball, err = snapshotOf(ctx, store, b.base.Manifest, modules, k+1, b.v0)
		}
		if err != nil {
			return fmt.Errorf("%s as a bundle revision: %w", where, err)
		}
		if total += int64(len(tarball)); total > maxRevisionBytes {
			return fmt.Errorf("the stream's first %d revisions of the bundle come to %d MiB, over the %d MiB authzbench builds before a run: give fewer changes (--change-rate, --duration)",
				k+1, total>>20, maxRevisionBytes>>20)
		}
		b.server.add(tarball)
	}
	return nil
}

// patchStore applies a JSON Patch of the data to the store, as OPA's Data API applies one.
func patchStore(ctx context.Context, store storage.Store, form []byte) error {
	ops, err := readPatch(form)
	if err != nil {
		return err
	}
	txn, err := store.NewTransaction(ctx, storage.WriteParams)
	if err != nil {
		return err
	}
	for _, op := range ops {
		if err := store.Write(ctx, txn, op.op, op.path, op.value); err != nil {
			store.Abort(ctx, txn)
			return fmt.Errorf("%s %s: %w", op.name, op.path, err)
		}
	}
	return store.Commit(ctx, txn)
}

// replaceBundleModule is modules with the module a policy replacement names in place of its
// own, every module compiled together as OPA's activation compiles them.
func replaceBundleModule(modules []bundle.ModuleFile, form []byte, version ast.RegoVersion) ([]bundle.ModuleFile, error) {
	pw, err := readPolicyWrite(form, true)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(modules))
	for i, m := range modules {
		ids[i] = m.URL
	}
	id, err := moduleID(ids, pw.Replaces)
	if err != nil {
		return nil, err
	}
	out := append([]bundle.ModuleFile(nil), modules...)
	parsed := map[string]*ast.Module{}
	for i, m := range out {
		if m.URL == id {
			p, err := ast.ParseModuleWithOpts(id, pw.Module, ast.ParserOptions{RegoVersion: version})
			if err != nil {
				return nil, err
			}
			out[i] = bundle.ModuleFile{URL: m.URL, Path: m.Path, Raw: []byte(pw.Module), Parsed: p}
		}
		parsed[out[i].URL] = out[i].Parsed
	}
	c := ast.NewCompiler().WithUseTypeCheckAnnotations(true).WithDefaultRegoVersion(version)
	if c.Compile(parsed); c.Failed() {
		return nil, fmt.Errorf("OPA refuses the policy: %w", c.Errors)
	}
	return out, nil
}

// snapshotOf is the snapshot bundle of the store's data and the modules, at revision k.
func snapshotOf(ctx context.Context, store storage.Store, manifest bundle.Manifest, modules []bundle.ModuleFile, k int, v0 bool) ([]byte, error) {
	txn, err := store.NewTransaction(ctx)
	if err != nil {
		return nil, err
	}
	defer store.Abort(ctx, txn)
	root, err := store.Read(ctx, txn, storage.Path{})
	if err != nil {
		return nil, err
	}
	data, ok := root.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("the data is a %T, not an object", root)
	}
	manifest = manifest.Copy()
	manifest.Revision = strconv.Itoa(k)
	return writeBundle(&bundle.Bundle{Manifest: manifest, Data: data, Modules: modules}, v0)
}

// deltaOf is the delta bundle of a change, at revision k: its JSON Patch as OPA's delta bundles
// take one (an add is an upsert, which OPA applies as its store's add), under the snapshot's
// manifest, whose roots a delta must keep. The patch was checked against the data by Prepare,
// as the Data API checks one, so OPA applies it as it would have applied the PATCH.
func deltaOf(form []byte, manifest bundle.Manifest, k int, v0 bool) ([]byte, error) {
	ops, err := readPatch(form)
	if err != nil {
		return nil, err
	}
	patch := bundle.Patch{Data: make([]bundle.PatchOperation, len(ops))}
	for i, op := range ops {
		name := op.name
		if name == "add" {
			name = "upsert"
		}
		patch.Data[i] = bundle.PatchOperation{Op: name, Path: op.pointer, Value: op.value}
	}
	manifest = manifest.Copy()
	manifest.Revision = strconv.Itoa(k)
	return writeBundle(&bundle.Bundle{Manifest: manifest, Patch: patch}, v0)
}

// Apply publishes revision k and returns once OPA's server holds it, or the write's time is up.
func (b *bundleChanges) Apply(ctx context.Context, k int, _ change.Change) change.Ack {
	if err := b.server.publish(k); err != nil {
		return change.Ack{Class: "refused", Err: err}
	}
	want := strconv.Itoa(k)
	tick := time.NewTicker(ackEvery)
	defer tick.Stop()
	var last string
	for {
		active, err := b.activeRevision(ctx)
		switch {
		case err == nil && active == want:
			return change.Ack{}
		case ctx.Err() != nil:
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return change.Ack{Class: "timeout", Err: fmt.Errorf("OPA's server did not activate bundle revision %s in time (its active revision: %q%s): see its log, or give a longer --timeout", want, last, errNote(err))}
			}
			return change.Ack{Class: "timeout", Err: ctx.Err()}
		case err == nil:
			last = active
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
		}
	}
}

func errNote(err error) string {
	if err == nil {
		return ""
	}
	return "; " + err.Error()
}

// activeRevision is the revision of authzbench's bundle OPA's store holds.
func (b *bundleChanges) activeRevision(ctx context.Context) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.revisionURL, nil)
	if err != nil {
		return "", err
	}
	resp, err := b.client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET %s: %s", b.revisionURL, resp.Status)
	}
	var out struct {
		Result *string `json:"result"`
	}
	if err := json.Unmarshal(body, &out); err != nil || out.Result == nil {
		return "", fmt.Errorf("GET %s: no revision in %q", b.revisionURL, bytes.TrimSpace(body))
	}
	return *out.Result, nil
}

// readBundle reads a tarball authzbench built back into a bundle.
func readBundle(tarball []byte, v0 bool) (*bundle.Bundle, error) {
	r := bundle.NewCustomReader(bundle.NewTarballLoaderWithBaseURL(bytes.NewReader(tarball), ""))
	if v0 {
		r = r.WithRegoVersion(ast.RegoV0)
	}
	b, err := r.Read()
	if err != nil {
		return nil, err
	}
	return &b, nil
}

// provenancePath is where OPA's provenance names the revision of authzbench's bundle.
const provenancePath = "/provenance/bundles/" + bundleName + "/revision"

// bundlePromise is what a change given as a bundle revision promises, recorded with the run
// (sut.consistency): none of the answers sent after its acknowledgement may be stale, as after
// a Data API PATCH, since acknowledged means OPA's store holds the revision.
var bundlePromise = kinds.Consistency{Name: "bundle revision active",
	Why: "a change is published as a bundle revision, which OPA's bundle plugin downloads by long polling; it is acknowledged once OPA's store holds the revision " +
		"(data.system.bundles." + bundleName + ".manifest.revision, written in the activation's transaction, read every 5 ms), so a decision sent after it reads it: the write's latency is the download and the activation"}

// bundleWriter applies a run's changes as revisions of the bundle the server was given.
func (t *server) bundleWriter() (change.Applier, error) {
	base, err := readBundle(t.revisions.tarballs[0], t.v0)
	if err != nil {
		return nil, fmt.Errorf("read the workload's bundle back to build its revisions: %w", err)
	}
	delta := t.bundle.BundleChanges == deltaChanges
	t.revisions.mu.Lock()
	t.revisions.sequential = delta
	t.revisions.mu.Unlock()
	return &bundleChanges{server: t.revisions, base: base, v0: t.v0, delta: delta, client: t.WriteClient(),
		revisionURL: t.URL() + "/v1/data/system/bundles/" + bundleName + "/manifest/revision"}, nil
}

// RefusesWrites refuses, before anything starts (kinds.WritesRefuser), changes to a bundle
// OPA's optimizer built: it partially evaluated the query over the data, so every revision
// would have to be optimized again, for minutes each.
func (t *server) RefusesWrites() error {
	if t.bundle.Optimize > 0 {
		return fmt.Errorf("opa/server with a bundle optimized by opa build -O=%d (optimize): OPA's optimizer folds the data into the policy, so no change to the data can be published without optimizing every revision again; run the changes on the bundle as written", t.bundle.Optimize)
	}
	return nil
}
