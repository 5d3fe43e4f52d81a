package target

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"time"

	"github.com/authzbench/authzbench/internal/cedarserver"
	"github.com/authzbench/authzbench/internal/httpload"
	"github.com/authzbench/authzbench/internal/sut"
	"github.com/authzbench/authzbench/internal/workload"
)

// cedarServer drives Cedar served over HTTP: POST /v1/is_authorized with the Cedar request
// document. By default it starts `authzbench cedar-server` (cedar-go behind net/http, in its own
// process) on a loopback port with the workload's policies, entities and schema; with
// Options.URL it measures a running server that speaks the same API.
type cedarServer struct {
	opts     Options
	url      string
	proc     *sut.Process
	command  []string
	endpoint httpload.Endpoint
	requests [][]byte
	timed    [][]byte
	died     chan struct{}
	diedErr  error
}

func (t *cedarServer) Start(ctx context.Context, w *workload.Workload) error {
	t.died = make(chan struct{})
	path := cedarserver.Path
	if t.opts.URL != "" {
		u, err := url.Parse(t.opts.URL)
		if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
			return fmt.Errorf("--url %q: want http://host:port[/path]", t.opts.URL)
		}
		if u.Path != "" && u.Path != "/" {
			path = u.Path
		}
		t.url = u.Scheme + "://" + u.Host
	} else if err := t.launch(ctx, w); err != nil {
		return err
	}
	var err error
	if t.endpoint, _, err = httpload.ParseURL(t.url + path); err != nil {
		return err
	}
	t.endpoint.Timeout = t.opts.timeout()
	t.endpoint.KeepAlive = !t.opts.NoReuse
	headers := []httpload.Header{{Name: "Content-Type", Value: "application/json"}}
	t.requests = make([][]byte, len(w.Inputs))
	if t.opts.ServerMetricsEvery > 0 {
		t.timed = make([][]byte, len(w.Inputs))
	}
	for i, in := range w.Inputs {
		if in.Cedar == nil {
			return fmt.Errorf("workload %s input %d has no Cedar request", w.Name, i+1)
		}
		t.requests[i] = httpload.EncodeRequest(t.endpoint, "POST", path, headers, in.Cedar)
		if t.timed != nil {
			t.timed[i] = httpload.EncodeRequest(t.endpoint, "POST", path+"?metrics=true", headers, in.Cedar)
		}
	}
	if t.opts.URL != "" {
		return probe(ctx, t.url+path, w.Inputs[0].Cedar, t.opts.timeout())
	}
	return nil
}

func (t *cedarServer) launch(ctx context.Context, w *workload.Workload) error {
	paths, err := cedarPaths(t.opts, w)
	if err != nil {
		return err
	}
	// Load in this process first: a policy or schema error is reported with its position before
	// any server starts, and every request is checked to parse.
	engine, err := loadCedar(t.opts, w)
	if err != nil {
		return err
	}
	if _, err := parseCedarRequests(engine, w); err != nil {
		return err
	}
	addr, err := t.listenAddr()
	if err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find own executable to serve Cedar: %w", err)
	}
	args := []string{cedarserver.Arg, "--addr", addr}
	for _, p := range paths.Policies {
		args = append(args, "--policies", p)
	}
	if paths.Entities != "" {
		args = append(args, "--entities", paths.Entities)
	}
	if paths.Schema != "" {
		args = append(args, "--schema", paths.Schema)
	}
	args = append(args, t.opts.SUTArgs...)
	t.command = append([]string{self}, args...)
	cmd := exec.Command(self, args...)
	if len(t.opts.PinSUT) > 0 {
		if cmd, err = sut.Pinned(cmd, t.opts.PinSUT); err != nil {
			return err
		}
	}
	if t.proc, err = sut.Start("cedar server", cmd); err != nil {
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

func (t *cedarServer) listenAddr() (string, error) {
	if t.opts.Port != 0 {
		return sut.CheckFree(t.opts.Port)
	}
	return sut.FreeAddr()
}

func (t *cedarServer) Worker() Decider {
	return &httpWorker{conn: httpload.NewConn(t.endpoint), requests: t.requests, timed: t.timed,
		timedEvery: t.opts.ServerMetricsEvery, decisions: newCedarDecisionReader()}
}

func (t *cedarServer) Died() <-chan struct{} { return t.died }
func (t *cedarServer) Err() error            { return t.diedErr }

func (t *cedarServer) Info() Info {
	info := Info{Engine: "cedar", Mode: "server", URL: t.url + cedarserver.Path,
		External: t.opts.URL != "", Connections: t.opts.Workers}
	if t.proc != nil {
		info.Version = cedarVersion()
		info.PID = t.proc.PID()
		info.Command = t.command
	}
	return info
}

func (t *cedarServer) Stop(context.Context) error {
	if t.proc == nil {
		return nil
	}
	return t.proc.Stop(5 * time.Second)
}
