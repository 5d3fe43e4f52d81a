package opa

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/bundle"
	"github.com/open-policy-agent/opa/v1/compile"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/util"

	"github.com/authzbench/authzbench/internal/kinds"
	"github.com/authzbench/authzbench/internal/result"
	"github.com/authzbench/authzbench/internal/workload"
)

// BundleConfig is how opa/server is given the workload as a bundle, as OPA runs in production:
// downloaded from a bundle server by OPA's bundle plugin and activated, rather than files on
// its command line; optionally optimized as `opa build -O=N` optimizes it.
type BundleConfig struct {
	// BundleServer serves the workload's bundle from a bundle server inside authzbench on
	// loopback; OPA is ready (and the start's time and peak memory, sut.startup, are taken)
	// once its bundle plugin has activated it.
	BundleServer bool `yaml:"bundle_server"`
	// Optimize is opa build's -O: 1 or 2 build the bundle with OPA's optimizer for the
	// workload's query as its entrypoint (served as bundle_server serves it); 0, the default,
	// leaves it as written. Every input is decided by the optimized and the unoptimized bundle
	// before the server starts: a difference refuses the target, naming the input.
	Optimize int `yaml:"optimize"`
	// BundleSizeLimit is OPA's size_limit_bytes for the bundle (the most bytes one file in it
	// may hold); OPA's own default, 1 GiB, when 0. A bundle OPA would refuse is refused before
	// its server starts.
	BundleSizeLimit int `yaml:"bundle_size_limit"`
	// Provenance asks every decision for OPA's provenance, whose bundle revision names the
	// version of the world it was made at (server_bundle_changes.go).
	Provenance bool `yaml:"provenance"`
	// BundleChanges is how a run whose world changes publishes each change: "snapshot" (the
	// default: the whole world at that version) or "delta" (a delta bundle: the change's JSON
	// Patch alone, data only).
	BundleChanges string `yaml:"bundle_changes"`
}

func init() {
	kinds.DeclareOption(kinds.Option{Key: "bundle_server", Flag: "bundle-server", Selective: true,
		Help: "{kinds}: give OPA the workload as a bundle from a bundle server inside authzbench, which OPA's bundle plugin downloads and activates (the start's time and peak memory, sut.startup, are then its activation's), instead of files on its command line"})
	kinds.DeclareOption(kinds.Option{Key: "optimize", Flag: "optimize", Selective: true,
		Help: "{kinds}: opa build's -O, 1 or 2: the bundle built by OPA's optimizer for the workload's query (served as --bundle-server serves it), after every input is decided alike by it and the unoptimized bundle"})
	kinds.DeclareOption(kinds.Option{Key: "bundle_size_limit", Flag: "bundle-size-limit", Selective: true,
		Help: "{kinds}: OPA's size_limit_bytes for the bundle, the most bytes a file in it may hold (OPA's default, 1 GiB, when unset); a bigger bundle is refused before the server starts"})
}

// served says whether the workload goes to OPA as a bundle from authzbench's bundle server.
func (c *BundleConfig) served() bool { return c.BundleServer || c.Optimize > 0 }

// sizeLimit is the bundle's size limit in force: the setting, else OPA's default.
func (c *BundleConfig) sizeLimit() int64 {
	if c.BundleSizeLimit > 0 {
		return int64(c.BundleSizeLimit)
	}
	return bundle.DefaultSizeLimitBytes
}

// check refuses what OPA cannot be given: an optimization level opa build does not have, a
// negative limit, a bundle for a server authzbench does not start, and for replicas (each would
// be a bundle server's client of its own, and the start measured is one server's).
func (c *BundleConfig) check(url string, replicas int) error {
	var errs []error
	if c.Optimize < 0 || c.Optimize > 2 {
		errs = append(errs, kinds.NewOptionError("optimize", func(n func(string) string) string {
			return fmt.Sprintf("%s %d: opa build's -O takes 0 (none), 1 or 2", n("optimize"), c.Optimize)
		}))
	}
	if c.BundleSizeLimit < 0 {
		errs = append(errs, kinds.NewOptionError("bundle_size_limit", func(n func(string) string) string {
			return fmt.Sprintf("%s %d: want a count of bytes, or none for OPA's 1 GiB", n("bundle_size_limit"), c.BundleSizeLimit)
		}))
	}
	if c.BundleSizeLimit > 0 && !c.served() {
		errs = append(errs, kinds.NewOptionError("bundle_size_limit", func(n func(string) string) string {
			return fmt.Sprintf("%s limits a bundle OPA downloads: give it with %s or %s", n("bundle_size_limit"), n("bundle_server"), n("optimize"))
		}))
	}
	if url != "" && (c.served() || c.BundleSizeLimit > 0) {
		errs = append(errs, kinds.NewOptionError("bundle_server", func(n func(string) string) string {
			return fmt.Sprintf("%s, %s and %s give a bundle to the server authzbench starts; with %s it starts none", n("bundle_server"), n("optimize"), n("bundle_size_limit"), n("url"))
		}))
	}
	if c.Provenance && !c.served() {
		errs = append(errs, kinds.NewOptionError("provenance", func(n func(string) string) string {
			return fmt.Sprintf("%s names the bundle revision behind each decision: give it with %s", n("provenance"), n("bundle_server"))
		}))
	}
	if c.BundleChanges != "" && c.BundleChanges != snapshotChanges && c.BundleChanges != deltaChanges {
		errs = append(errs, kinds.NewOptionError("bundle_changes", func(n func(string) string) string {
			return fmt.Sprintf("%s %q: want %s (each change a bundle of the whole world) or %s (a delta bundle of the change's patch alone)", n("bundle_changes"), c.BundleChanges, snapshotChanges, deltaChanges)
		}))
	}
	if c.BundleChanges != "" && !c.served() {
		errs = append(errs, kinds.NewOptionError("bundle_changes", func(n func(string) string) string {
			return fmt.Sprintf("%s says how changes are published as bundle revisions: give it with %s", n("bundle_changes"), n("bundle_server"))
		}))
	}
	if replicas > 1 && c.served() {
		errs = append(errs, kinds.NewOptionError("bundle_server", func(n func(string) string) string {
			return fmt.Sprintf("%s and %s measure one server's activation of the bundle; drop %s", n("bundle_server"), n("optimize"), n("replicas"))
		}))
	}
	return errors.Join(errs...)
}

// bundleName and bundleService name the bundle and its server in OPA's configuration.
const (
	bundleName    = "authzbench"
	bundleService = "authzbench_bundles"
)

// builtBundle is a workload's bundle as OPA is served it: the tarball, and each file's size
// uncompressed, as OPA's size limit counts it.
type builtBundle struct {
	tarball []byte
	files   []bundleFile
}

type bundleFile struct {
	name string
	size int64
}

// bundleKey is a workload at an optimization level: a bundle is built once per run for each,
// whichever targets serve it, and checked before any load (CheckWorkload).
type bundleKey struct {
	w        *workload.Workload
	optimize int
}

var (
	bundlesMu sync.Mutex
	built     = map[bundleKey]*builtBundle{}
)

// CheckWorkload builds the workload's bundle when the settings serve one, before any load:
// optimized, and refused if it decides any input otherwise than the unoptimized bundle; and
// refused if OPA's size limit would refuse it. Each is bad input, naming the input or the file.
func (c *ServerConfig) CheckWorkload(w *workload.Workload) error {
	if !c.served() || c.URL != "" || !w.HasRego() {
		return nil
	}
	b, err := c.BundleConfig.build(context.Background(), w)
	if err != nil {
		return err
	}
	return c.checkSize(w, b)
}

// build is the workload's bundle at the settings' optimization level, built once per run.
func (c *BundleConfig) build(ctx context.Context, w *workload.Workload) (*builtBundle, error) {
	key := bundleKey{w, c.Optimize}
	bundlesMu.Lock()
	defer bundlesMu.Unlock()
	if b := built[key]; b != nil {
		return b, nil
	}
	dir, err := os.MkdirTemp("", "authzbench-bundle-")
	if err != nil {
		return nil, fmt.Errorf("create directory for workload %s's bundle: %w", w.Name, err)
	}
	defer os.RemoveAll(dir)
	policies, data, err := w.Files(dir)
	if err != nil {
		return nil, err
	}
	b, err := c.bundleOf(ctx, w, policies, data)
	if err != nil {
		return nil, err
	}
	built[key] = b
	return b, nil
}

// bundleOf builds the bundle from the workload's files.
func (c *BundleConfig) bundleOf(ctx context.Context, w *workload.Workload, policies, data []string) (*builtBundle, error) {
	v0 := regoV0(w)
	bundles, err := workloadBundles(policies, data, v0)
	if err != nil {
		return nil, fmt.Errorf("workload %s as a bundle: %w", w.Name, err)
	}
	if len(bundles) != 1 {
		return nil, kinds.NewOptionError("bundle_server", func(n func(string) string) string {
			return fmt.Sprintf("%s: workload %s is %d bundles; authzbench serves OPA one", n("bundle_server"), w.Name, len(bundles))
		})
	}
	b := bundles[0]
	if c.Optimize > 0 {
		// The reference is read afresh: OPA's optimizer rewrites the modules it is given in
		// place (Bundle.Copy shares their slice), and the reference is the bundle as written.
		refs, err := workloadBundles(policies, data, v0)
		if err != nil {
			return nil, fmt.Errorf("workload %s as a bundle: %w", w.Name, err)
		}
		opt, err := optimizeBundle(ctx, b, c.Optimize, w.Query, v0)
		if err != nil {
			return nil, fmt.Errorf("workload %s: opa build -O=%d: %w", w.Name, c.Optimize, err)
		}
		if optimizedHook != nil {
			optimizedHook(opt)
		}
		if err := sameDecisions(ctx, w, refs[0], opt, fmt.Sprintf("the -O=%d bundle", c.Optimize)); err != nil {
			return nil, err
		}
		b = opt
	}
	// Revision 0: a run whose world changes publishes revision k after the k-th change, and
	// OPA's provenance names the revision behind each decision.
	b.Manifest.Revision = "0"
	tarball, err := writeBundle(b, v0)
	if err != nil {
		return nil, fmt.Errorf("workload %s as a bundle: %w", w.Name, err)
	}
	files, err := filesOf(tarball)
	if err != nil {
		return nil, fmt.Errorf("workload %s as a bundle: %w", w.Name, err)
	}
	return &builtBundle{tarball: tarball, files: files}, nil
}

// serverBundle serves the workload's bundle (built as CheckWorkload built it) on loopback,
// and returns OPA's flags that point its bundle plugin at it. The bundle server is closed by
// the caller once OPA has stopped.
func (c *BundleConfig) serverBundle(ctx context.Context, w *workload.Workload) (args []string, srv *http.Server, revs *revisionServer, rec *result.Bundle, err error) {
	b, err := c.build(ctx, w)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	if err := c.checkSize(w, b); err != nil {
		return nil, nil, nil, nil, err
	}
	revs = newRevisionServer(b.tarball)
	srv, url, err := serveRevisions(revs)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	rec = &result.Bundle{Optimize: c.Optimize, Bytes: int64(len(b.tarball)), SizeLimitBytes: c.sizeLimit(), Polling: pollingRecord}
	for _, f := range b.files {
		rec.FilesBytes += f.size
	}
	key := "bundles." + bundleName + "."
	args = []string{
		"--set", "services." + bundleService + ".url=" + url,
		"--set", key + "service=" + bundleService,
		"--set", key + "resource=/bundles/0.tar.gz",
		// Long polling: a revision published during the run (a change) is answered to the
		// download OPA holds open; a run without changes never polls, so the activation
		// measured is the first. The delays bound only the retries after a failed download.
		"--set", fmt.Sprintf("%spolling.long_polling_timeout_seconds=%d", key, longPollSeconds),
		"--set", key + "polling.min_delay_seconds=1",
		"--set", key + "polling.max_delay_seconds=2",
		"--set", fmt.Sprintf("%ssize_limit_bytes=%d", key, c.sizeLimit()),
	}
	return args, srv, revs, rec, nil
}

// optimizedHook, when set (by a test), changes each optimized bundle before it is checked: a
// stand-in for an optimizer that changes a decision.
var optimizedHook func(*bundle.Bundle)

// optimizeBundle is b as `opa build -O=level -e QUERY` builds it: OPA's optimizer partially
// evaluates the query's rule into the bundle's policy, rewriting b's modules as it goes.
func optimizeBundle(ctx context.Context, b *bundle.Bundle, level int, query string, v0 bool) (*bundle.Bundle, error) {
	version := ast.RegoV1
	if v0 {
		version = ast.RegoV0
	}
	c := compile.New().WithTarget(compile.TargetRego).WithOptimizationLevel(level).WithRegoVersion(version).
		WithEntrypoints(strings.ReplaceAll(strings.TrimPrefix(query, "data."), ".", "/")).WithBundle(b)
	// OPA's optimizer partially evaluates the rule over the bundle's data, known to it: on
	// rbac's 200 users and 500 resources `opa build -O=1` runs for minutes. It takes no
	// deadline, so it is waited for at most optimizeWithin, and a build past that is refused.
	done := make(chan error, 1)
	go func() { done <- c.Build(ctx) }()
	select {
	case err := <-done:
		if err != nil {
			return nil, err
		}
		return c.Bundle(), nil
	case <-time.After(optimizeWithin):
		return nil, fmt.Errorf("OPA's optimizer did not finish within %s (it partially evaluates the query over the bundle's data, which it takes as known; a large data document multiplies its work)", optimizeWithin)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// optimizeWithin bounds opa build -O's optimization of a workload's bundle.
const optimizeWithin = 2 * time.Minute

// sameDecisions decides every input of w with the reference bundle and the candidate (what
// names it), in process, and refuses the first input on which they differ, naming it: a bundle
// that changes a decision measures another policy, so it is never timed.
func sameDecisions(ctx context.Context, w *workload.Workload, ref, cand *bundle.Bundle, what string) error {
	refQuery, err := prepareBundle(ctx, w, ref)
	if err != nil {
		return fmt.Errorf("workload %s, the unoptimized bundle: %w", w.Name, err)
	}
	candQuery, err := prepareBundle(ctx, w, cand)
	if err != nil {
		return fmt.Errorf("workload %s, %s: %w", w.Name, what, err)
	}
	for i, in := range w.Inputs {
		var input any
		if err := util.UnmarshalJSON(in.JSON, &input); err != nil {
			return fmt.Errorf("workload %s input %d: %w", w.Name, i+1, err)
		}
		want, err := decide(ctx, refQuery, input)
		if err != nil {
			return fmt.Errorf("workload %s input %d%s, the unoptimized bundle: %w", w.Name, i+1, sourceOf(in), err)
		}
		got, err := decide(ctx, candQuery, input)
		if err != nil {
			return fmt.Errorf("workload %s input %d%s, %s: %w", w.Name, i+1, sourceOf(in), what, err)
		}
		if !reflect.DeepEqual(got, want) {
			return kinds.NewOptionError("optimize", func(n func(string) string) string {
				return fmt.Sprintf("%s: workload %s input %d%s %s: %s decides %s, the unoptimized bundle %s; a bundle that changes a decision is not timed",
					n("optimize"), w.Name, i+1, sourceOf(in), in.JSON, what, show(got), show(want))
			})
		}
	}
	return nil
}

// sourceOf is " (file:line)" for an input read from a file; empty for a built-in one.
func sourceOf(in workload.Input) string {
	if in.Source == "" {
		return ""
	}
	return " (" + in.Source + ")"
}

// show is a decision as messages say it: its JSON, or "undefined".
func show(v *any) string {
	if v == nil {
		return "undefined"
	}
	return string(util.MustMarshalJSON(*v))
}

func prepareBundle(ctx context.Context, w *workload.Workload, b *bundle.Bundle) (rego.PreparedEvalQuery, error) {
	opts := []func(*rego.Rego){rego.Query(w.Query), rego.ParsedBundle(bundleName, b)}
	if regoV0(w) {
		opts = append(opts, rego.SetRegoVersion(ast.RegoV0))
	}
	return rego.New(opts...).PrepareForEval(ctx)
}

// decide is the query's value for input; nil when undefined.
func decide(ctx context.Context, q rego.PreparedEvalQuery, input any) (*any, error) {
	rs, err := q.Eval(ctx, rego.EvalInput(input))
	if err != nil || len(rs) == 0 || len(rs[0].Expressions) == 0 {
		return nil, err
	}
	return &rs[0].Expressions[0].Value, nil
}

// checkSize refuses a bundle OPA's bundle plugin would refuse at activation: a file in it
// larger than its size limit, as OPA's reader counts it (the file's bytes uncompressed).
func (c *BundleConfig) checkSize(w *workload.Workload, b *builtBundle) error {
	limit := c.sizeLimit()
	for _, f := range b.files {
		if f.size > limit {
			return kinds.NewOptionError("bundle_size_limit", func(n func(string) string) string {
				return fmt.Sprintf("workload %s's bundle holds %s of %d bytes, over OPA's size limit of %d bytes a file (%s, OPA's size_limit_bytes): OPA would refuse the bundle; raise %s",
					w.Name, f.name, f.size, limit, n("bundle_size_limit"), n("bundle_size_limit"))
			})
		}
	}
	return nil
}

// filesOf lists a bundle tarball's files and their sizes uncompressed.
func filesOf(tarball []byte) ([]bundleFile, error) {
	zr, err := gzip.NewReader(bytes.NewReader(tarball))
	if err != nil {
		return nil, err
	}
	tr := tar.NewReader(zr)
	var out []bundleFile
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		out = append(out, bundleFile{strings.TrimPrefix(h.Name, "/"), h.Size})
	}
}

// serveBundles serves the tarballs on loopback, /bundles/N.tar.gz, as a bundle server would;
// the server is the caller's to close.
func serveBundles(tarballs [][]byte) (*http.Server, string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", fmt.Errorf("serve the workload's bundle to OPA: %w", err)
	}
	mux := http.NewServeMux()
	for i, tb := range tarballs {
		mux.HandleFunc(fmt.Sprintf("GET /bundles/%d.tar.gz", i), func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/gzip")
			w.Write(tb) //nolint:errcheck // OPA says so if it gets no bundle
		})
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln) //nolint:errcheck // ends with Close
	return srv, "http://" + ln.Addr().String(), nil
}
