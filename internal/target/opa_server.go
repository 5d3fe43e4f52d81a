package target

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/authzbench/authzbench/internal/httpload"
	"github.com/authzbench/authzbench/internal/sut"
	"github.com/authzbench/authzbench/internal/verify"
	"github.com/authzbench/authzbench/internal/workload"
)

// opaServer drives OPA's REST API: POST /v1/data/<path> with {"input": ...}. By default it starts
// `opa run --server` on a loopback port with the workload's policy and data and stops it at the
// end; with Options.URL it measures a server that is already running and loads nothing into it.
type opaServer struct {
	opts     Options
	url      string
	version  string
	proc     *sut.Process
	command  []string // the server's command line, as started
	endpoint httpload.Endpoint
	path     string
	requests [][]byte // complete HTTP requests, one per input, encoded before the clock starts
	timed    [][]byte // the same asking for the server's timers (?metrics=true), if sampled
	died     chan struct{}
	diedErr  error
}

func (t *opaServer) Start(ctx context.Context, w *workload.Workload) error {
	t.died = make(chan struct{})
	t.path = "/v1/data/" + strings.ReplaceAll(strings.TrimPrefix(w.Query, "data."), ".", "/")
	if t.opts.URL != "" {
		if err := t.useExternal(); err != nil {
			return err
		}
	} else if err := t.launch(ctx, w); err != nil {
		return err
	}
	var err error
	if t.endpoint, _, err = httpload.ParseURL(t.url + t.path); err != nil {
		return err
	}
	t.endpoint.Timeout = t.opts.timeout()
	t.endpoint.KeepAlive = !t.opts.NoReuse
	headers := []httpload.Header{{Name: "Content-Type", Value: "application/json"}}
	t.requests = make([][]byte, len(w.Inputs))
	var first []byte
	for i, in := range w.Inputs {
		body := append(append([]byte(`{"input":`), in.JSON...), '}')
		if i == 0 {
			first = body
		}
		t.requests[i] = httpload.EncodeRequest(t.endpoint, "POST", t.path, headers, body)
	}
	if t.opts.ServerMetricsEvery > 0 {
		timedPath := t.path + "?metrics=true"
		if strings.Contains(t.path, "?") {
			timedPath = t.path + "&metrics=true"
		}
		t.timed = make([][]byte, len(w.Inputs))
		for i, in := range w.Inputs {
			body := append(append([]byte(`{"input":`), in.JSON...), '}')
			t.timed[i] = httpload.EncodeRequest(t.endpoint, "POST", timedPath, headers, body)
		}
	}
	if t.opts.URL != "" {
		return probe(ctx, t.url+t.path, first, t.opts.timeout())
	}
	return nil
}

// probe sends one request to a server authzbench did not start, so an unreachable address fails
// before any load with the network's own words. Its answer is not judged here: a wrong decision
// or a 404 is what the run is for, and it will be counted there.
func probe(ctx context.Context, uri string, body []byte, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, uri, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("--url: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("cannot reach --url %s: %w", uri, err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return nil
}

// useExternal points the target at a running server. A URL with a path is taken as the full
// decision endpoint; without one, the workload's query becomes /v1/data/<path>.
func (t *opaServer) useExternal() error {
	u, err := url.Parse(t.opts.URL)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return fmt.Errorf("--url %q: want http://host:port[/path]", t.opts.URL)
	}
	if u.Path != "" && u.Path != "/" {
		t.path = u.Path
	}
	t.url = u.Scheme + "://" + u.Host
	return nil
}

func (t *opaServer) launch(ctx context.Context, w *workload.Workload) error {
	dir, err := workDir(t.opts)
	if err != nil {
		return err
	}
	policies, data, err := w.Files(dir)
	if err != nil {
		return err
	}
	// Compile in-process first: a Rego error is reported with file:line before any server starts.
	if _, err := PrepareOPA(ctx, w.Query, policies, data); err != nil {
		return err
	}
	addr, err := t.listenAddr()
	if err != nil {
		return err
	}
	args := []string{"run", "--server", "--addr", addr, "--log-level", t.opts.logLevel()}
	args = append(args, t.opts.SUTArgs...)
	args = append(args, policies...)
	args = append(args, data...)
	t.version, err = opaVersion(ctx, t.opts.OPA)
	if err != nil {
		return err
	}
	t.command = append([]string{t.opts.OPA.Path}, t.opts.OPA.Args(args...)...)
	cmd := t.opts.OPA.Command(context.Background(), args...)
	if len(t.opts.PinSUT) > 0 {
		if cmd, err = sut.Pinned(cmd, t.opts.PinSUT); err != nil {
			return err
		}
	}
	t.proc, err = sut.Start("opa server", cmd)
	if err != nil {
		return err
	}
	t.url = "http://" + addr
	if err := sut.WaitHealthy(ctx, t.url+"/health", t.proc, 60*time.Second); err != nil {
		t.proc.Stop(5 * time.Second)
		return err
	}
	go func() {
		<-t.proc.Exited()
		t.diedErr = t.proc.ExitError()
		close(t.died)
	}()
	return nil
}

func (t *opaServer) listenAddr() (string, error) {
	if t.opts.Port != 0 {
		return sut.CheckFree(t.opts.Port)
	}
	return sut.FreeAddr()
}

func (t *opaServer) Worker() Decider {
	return &httpWorker{conn: httpload.NewConn(t.endpoint), requests: t.requests, timed: t.timed,
		timedEvery: t.opts.ServerMetricsEvery, decisions: newDecisionReader("result")}
}

func (t *opaServer) Died() <-chan struct{} { return t.died }
func (t *opaServer) Err() error            { return t.diedErr }

func (t *opaServer) Info() Info {
	info := Info{Engine: "opa", Mode: "server", URL: t.url + t.path, Version: t.version,
		External: t.opts.URL != "", Connections: t.opts.Workers}
	if t.proc != nil {
		info.LogLevel = t.opts.logLevel()
		info.PID = t.proc.PID()
		info.Command = t.command
	}
	return info
}

func (t *opaServer) Stop(context.Context) error {
	if t.proc == nil {
		return nil
	}
	return t.proc.Stop(5 * time.Second)
}

// httpWorker sends prepared requests on its own keep-alive connection, so the measured path
// is one write, one read and the decision parse, allocating nothing once warm.
type httpWorker struct {
	conn       *httpload.Conn
	requests   [][]byte
	timed      [][]byte // requests asking for the server's timers, every timedEvery-th send
	timedEvery int
	sends      int
	decisions  *decisionReader
}

func (w *httpWorker) Decide(ctx context.Context, i int) verify.Outcome {
	req := w.requests[i]
	if w.timedEvery > 0 {
		if w.sends%w.timedEvery == 0 {
			req = w.timed[i]
		}
		w.sends++
	}
	status, body, err := w.conn.Do(ctx, req)
	connect := int64(w.conn.ConnectTime)
	if err != nil {
		if errors.Is(err, httpload.ErrTimeout) {
			return verify.Outcome{Kind: verify.TimedOut, ConnectNS: connect}
		}
		return verify.Outcome{Kind: verify.TransportFailure, ConnectNS: connect}
	}
	if status < 200 || status > 299 {
		return verify.Outcome{Kind: verify.HTTPStatus, Status: status, ConnectNS: connect}
	}
	out := w.decisions.read(body)
	out.ConnectNS = connect
	return out
}

// Close releases the worker's connection.
func (w *httpWorker) Close() { w.conn.Close() }

// opaVersion asks the OPA command for its version; the linked-in OPA answers without a process.
func opaVersion(ctx context.Context, o sut.OPA) (string, error) {
	if len(o.Prefix) > 0 {
		return linkedOPAVersion(), nil
	}
	v, err := o.Version(ctx)
	if err != nil {
		return "", err
	}
	return v, nil
}
