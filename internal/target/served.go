package target

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/authzbench/authzbench/internal/httpload"
	"github.com/authzbench/authzbench/internal/sut"
)

// served is what the targets that decide over HTTP share, whatever the engine behind them: a
// server that authzbench starts (pinned, health-checked and watched until it is stopped) or one
// that --url names, and every input encoded as a complete request before any clock runs. The
// engine's target says how to launch its server and how to read its answers.
type served struct {
	opts     Options
	url      string // scheme://host:port
	path     string // the decision endpoint on it
	proc     *sut.Process
	command  []string // the server's command line, as started, before any pinning wrapper
	endpoint httpload.Endpoint
	requests [][]byte // complete HTTP requests, one per input
	timed    [][]byte // the same asking for the server's timers (?metrics=true), if sampled
	died     chan struct{}
	diedErr  error
}

// start points the target at its server, launching one unless --url names one, and encodes one
// request per body. path is the engine's decision endpoint; a --url with a path replaces it.
func (s *served) start(ctx context.Context, path string, bodies [][]byte, launch func(context.Context) error) error {
	s.died = make(chan struct{})
	s.path = path
	if s.opts.URL != "" {
		if err := s.useExternal(); err != nil {
			return err
		}
	} else if err := launch(ctx); err != nil {
		return err
	}
	var err error
	if s.endpoint, _, err = httpload.ParseURL(s.url + s.path); err != nil {
		return err
	}
	s.endpoint.Timeout = s.opts.timeout()
	s.endpoint.KeepAlive = !s.opts.NoReuse
	headers := []httpload.Header{{Name: "Content-Type", Value: "application/json"}}
	s.requests = make([][]byte, len(bodies))
	for i, body := range bodies {
		s.requests[i] = httpload.EncodeRequest(s.endpoint, "POST", s.path, headers, body)
	}
	if s.opts.ServerMetricsEvery > 0 {
		sep := "?"
		if strings.Contains(s.path, "?") {
			sep = "&"
		}
		s.timed = make([][]byte, len(bodies))
		for i, body := range bodies {
			s.timed[i] = httpload.EncodeRequest(s.endpoint, "POST", s.path+sep+"metrics=true", headers, body)
		}
	}
	if s.opts.URL != "" {
		return probe(ctx, s.url+s.path, bodies[0], s.opts.timeout())
	}
	return nil
}

// probe sends one request to a server authzbench did not start, so an unreachable address fails
// before any load with the network's own words. Its answer is not judged here: a wrong decision
// or a 404 is what the run is for, and it will be counted there. It asks whether the server is
// there, not how fast it is, so it waits at least probeTimeout whatever --timeout says: a
// --timeout too short for anything is the run's to report, as such.
const probeTimeout = 10 * time.Second

func probe(ctx context.Context, uri string, body []byte, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, max(timeout, probeTimeout))
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
// decision endpoint, query included and escaped as given; without one, the engine's own endpoint
// is used.
func (s *served) useExternal() error {
	u, err := url.Parse(s.opts.URL)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return fmt.Errorf("--url %q: want http://host:port[/path]", s.opts.URL)
	}
	if u.Path != "" && u.Path != "/" {
		s.path = u.RequestURI()
	}
	s.url = u.Scheme + "://" + u.Host
	return nil
}

// listenAddr is the loopback address a started server listens on: --port if given and free,
// else a free port.
func (s *served) listenAddr() (string, error) {
	if s.opts.Port != 0 {
		return sut.CheckFree(s.opts.Port)
	}
	return sut.FreeAddr()
}

// run starts cmd, a server about to listen on addr, on the CPUs it is pinned to, waits until its
// /health answers, and from then on closes died if it exits before Stop.
func (s *served) run(ctx context.Context, name, addr string, cmd *exec.Cmd) error {
	s.command = slices.Clone(cmd.Args)
	var err error
	if len(s.opts.PinSUT) > 0 {
		if cmd, err = sut.Pinned(cmd, s.opts.PinSUT); err != nil {
			return err
		}
	}
	if s.proc, err = sut.Start(name, cmd); err != nil {
		return err
	}
	s.url = "http://" + addr
	if err := sut.WaitHealthy(ctx, s.url+"/health", s.proc, 60*time.Second); err != nil {
		s.proc.Stop(5 * time.Second)
		return err
	}
	go func() {
		<-s.proc.Exited()
		s.diedErr = s.proc.ExitError()
		close(s.died)
	}()
	return nil
}

// worker is one load worker's connection, reading the engine's answers with decisions.
func (s *served) worker(decisions *decisionReader) *httpWorker {
	return &httpWorker{conn: httpload.NewConn(s.endpoint), requests: s.requests, timed: s.timed,
		timedEvery: s.opts.ServerMetricsEvery, decisions: decisions}
}

// info is the part of Info every served target fills alike.
func (s *served) info(engine, version string) Info {
	info := Info{Engine: engine, Mode: "server", URL: s.url + s.path,
		External: s.opts.URL != "", Connections: s.opts.Workers}
	if s.proc != nil {
		info.Version = version
		info.PID = s.proc.PID()
		info.Command = s.command
	}
	return info
}

func (s *served) Died() <-chan struct{} { return s.died }
func (s *served) Err() error            { return s.diedErr }

func (s *served) Stop(context.Context) error {
	if s.proc == nil {
		return nil
	}
	return s.proc.Stop(5 * time.Second)
}
