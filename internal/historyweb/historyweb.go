// Package historyweb serves a history database as pages a reader browses: the series with a
// small trend of each and the latest changes first, a series along its commits, any stored
// run's full HTML report, and two commits compared. The pages are rendered on the server, from
// the report's own charts (report.Trend, report.Sparkline) and its stylesheet; they have no
// script and fetch nothing (their Content-Security-Policy says so), so they work without
// JavaScript and offline.
//
// It is not the server's lifecycle (cmd/authzbench's serve command listens, bounds and stops
// it), and it finds changes only through package history.
package historyweb

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"html/template"
	"io"
	"log"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/authzbench/authzbench/internal/history"
	"github.com/authzbench/authzbench/internal/report"
	"github.com/authzbench/authzbench/internal/result"
)

// Options tune the pages.
type Options struct {
	// Changes are how changes are looked for (history.ChangeOptions; Series and Branch are
	// ignored: every series, every branch).
	Changes history.ChangeOptions
	// Timeout bounds each request, the change search included; 30 s by default.
	Timeout time.Duration
	// Log, when set, receives a line per failed request.
	Log *log.Logger
}

// DefaultTimeout bounds a request when Options.Timeout is 0.
const DefaultTimeout = 30 * time.Second

// LatestChanges is how many changes the series list shows first.
const LatestChanges = 20

// server serves one store.
type server struct {
	st history.Store
	o  Options

	// The change search reads every series and runs a permutation test on each figure: it is
	// kept until the series list says something was added (a new point, a new series).
	mu          sync.Mutex
	changesKey  [32]byte
	changes     []history.Change
	changesDone bool
}

// Handler serves the pages of st. Each request is bounded by Options.Timeout.
func Handler(st history.Store, o Options) http.Handler {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	s := &server{st: st, o: o}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.page(s.index))
	mux.HandleFunc("GET /series/{id}", s.page(s.series))
	mux.HandleFunc("GET /report/{doc}", s.report)
	mux.HandleFunc("GET /compare", s.page(s.compare))
	mux.HandleFunc("GET /", s.page(func(*http.Request) (*pageData, error) {
		return nil, notFound("no such page: the history serves /, /series/ID, /report/DOCUMENT and /compare?base=COMMIT&new=COMMIT")
	}))
	return http.TimeoutHandler(secure(mux), o.Timeout, errorPage("timed out", fmt.Sprintf("The page took longer than %s to build.", o.Timeout)))
}

// secure says, with every response, that a page may load nothing from anywhere: its styles and
// charts are inline.
func secure(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'self'")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		h.ServeHTTP(w, r)
	})
}

// httpError is an error with the status it is answered with.
type httpError struct {
	status int
	msg    string
}

func (e *httpError) Error() string { return e.msg }

func notFound(format string, a ...any) error {
	return &httpError{http.StatusNotFound, fmt.Sprintf(format, a...)}
}
func badRequest(format string, a ...any) error {
	return &httpError{http.StatusBadRequest, fmt.Sprintf(format, a...)}
}

// pageData is what the page template draws: a title, where it is, and one of the bodies.
type pageData struct {
	Title  string
	Where  string // the database
	Index  *indexPage
	Series *seriesPage
	Cmp    *comparePage
	Error  string
}

func (pageData) Stylesheet() template.CSS {
	return report.Stylesheet() + report.TrendStylesheet() + extraCSS
}

// page turns a page builder into a handler: its page, or its error as a page with the status.
func (s *server) page(build func(*http.Request) (*pageData, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		p, err := build(r)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		p.Where = s.st.Where()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		var b strings.Builder
		if err := pageTemplate.Execute(&b, p); err != nil {
			s.fail(w, r, err)
			return
		}
		io.WriteString(w, b.String())
	}
}

func (s *server) fail(w http.ResponseWriter, r *http.Request, err error) {
	status := http.StatusInternalServerError
	var he *httpError
	if errors.As(err, &he) {
		status = he.status
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		status = http.StatusServiceUnavailable
	}
	if s.o.Log != nil && status >= 500 {
		s.o.Log.Printf("%s %s: %v", r.Method, r.URL.RequestURI(), err)
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	io.WriteString(w, errorPage(http.StatusText(status), err.Error()))
}

func errorPage(title, msg string) string {
	var b strings.Builder
	pageTemplate.Execute(&b, &pageData{Title: title, Error: msg})
	return b.String()
}

// allChanges are the changes of every series on every branch, found again only when the
// series list has changed since the last search.
func (s *server) allChanges(ctx context.Context, series []history.Series) ([]history.Change, error) {
	h := sha256.New()
	for _, se := range series {
		fmt.Fprintf(h, "%d %d %s %v\n", se.ID, se.Commits, se.Last.Format(time.RFC3339Nano), se.Branches)
	}
	var key [32]byte
	copy(key[:], h.Sum(nil))
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.changesDone && key == s.changesKey {
		return s.changes, nil
	}
	o := s.o.Changes
	o.Series, o.Branch = "", ""
	changes, err := history.FindChanges(ctx, s.st, o)
	if err != nil {
		return nil, err
	}
	s.changes, s.changesKey, s.changesDone = changes, key, true
	return changes, nil
}

// latestFirst sorts changes by their commit's time, newest first.
func latestFirst(cs []history.Change) []history.Change {
	out := slices.Clone(cs)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Time.After(out[j].Time) })
	return out
}

// branchOf is the branch a series is drawn along: the one asked for, else main, else master,
// else its first.
func branchOf(se history.Series, asked string) string {
	for _, want := range []string{asked, "main", "master"} {
		if want != "" && slices.Contains(se.Branches, want) {
			return want
		}
	}
	if len(se.Branches) > 0 {
		return se.Branches[0]
	}
	return ""
}

func short(c string) string {
	if c == "" {
		return "(no commit)"
	}
	if len(c) > 10 {
		return c[:10]
	}
	return c
}

func (s *server) seriesByID(ctx context.Context, raw string) (history.Series, []history.Series, error) {
	id, err := strconv.ParseInt(raw, 10, 64)
	if err != nil {
		return history.Series{}, nil, badRequest("series %q: not a number", raw)
	}
	all, err := s.st.Series(ctx)
	if err != nil {
		return history.Series{}, nil, err
	}
	for _, se := range all {
		if se.ID == id {
			return se, all, nil
		}
	}
	return history.Series{}, nil, notFound("no series %d in %s", id, s.st.Where())
}

// report serves a stored document's full HTML report, as `authzbench report --format html`
// renders it.
func (s *server) report(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.ParseInt(r.PathValue("doc"), 10, 64)
	if err != nil {
		s.fail(w, r, badRequest("document %q: not a number", r.PathValue("doc")))
		return
	}
	doc, err := s.document(r.Context(), id)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	var b strings.Builder
	if err := report.HTML(&b, doc.doc); err != nil {
		s.fail(w, r, fmt.Errorf("report of document %d: %w", id, err))
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	io.WriteString(w, b.String())
}

// storedDoc is a stored document read back, with the testbed it was filed under.
type storedDoc struct {
	doc     *result.Document
	testbed string
}

// document reads a stored document back as a result document.
func (s *server) document(ctx context.Context, id int64) (storedDoc, error) {
	stored, err := s.st.Document(ctx, id)
	if err != nil {
		if errors.Is(err, history.ErrNoDocument) {
			return storedDoc{}, notFound("%v", err)
		}
		return storedDoc{}, err
	}
	in, err := history.ParseInput(stored.Name, stored.Body, stored.Branch)
	if err != nil {
		return storedDoc{}, fmt.Errorf("document %d: %w", id, err)
	}
	return storedDoc{doc: in.Doc, testbed: stored.Testbed}, nil
}
