package kinds

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/authzbench/authzbench/internal/httpload"
	"github.com/authzbench/authzbench/internal/result"
	"github.com/authzbench/authzbench/internal/sut"
	"github.com/authzbench/authzbench/internal/verify"
)

// MaxReplicas bounds --replicas: each replica is a server process with its own copy of the
// policy and data.
const MaxReplicas = 64

// Replication is the setting of the served kinds that start several servers behind one
// address (replicas: K), as a Kubernetes Deployment behind a Service runs them: K processes of
// the same server, each on a free loopback port (pinned to distinct CPUs when the pinning
// given has enough of them), the load's connections spread over them round robin, one
// replica per connection for its life, as kube-proxy spreads connections, not requests.
type Replication struct {
	Replicas int `yaml:"replicas" count:"true"`
}

func init() {
	DeclareOption(Option{Key: "replicas", Flag: "replicas", Selective: true,
		Help: "{kinds}: start K server processes and spread the connections over them round robin, as a Kubernetes Service does (pinned to distinct CPUs where --pin-sut or --pin auto gives enough)"})
}

// replicaCount is how many server processes the settings start (1 when not replicated).
func (r Replication) replicaCount() int { return max(1, r.Replicas) }

// check refuses replicas that cannot be started as asked.
func (r Replication) check(c *ServerConfig) error {
	switch {
	case r.Replicas < 0 || r.Replicas > MaxReplicas:
		return optionError("replicas", func(n func(string) string) string {
			return fmt.Sprintf("%s %d: want 1 to %d", n("replicas"), r.Replicas, MaxReplicas)
		})
	case r.Replicas > 1 && c.URL != "":
		return optionError("replicas", func(n func(string) string) string {
			return fmt.Sprintf("%s starts that many servers; with %s it starts none (scale the servers behind it yourself)", n("replicas"), n("url"))
		})
	case r.Replicas > 1 && c.Port != 0:
		return optionError("replicas", func(n func(string) string) string {
			return fmt.Sprintf("%s listen on a free port each; drop %s", n("replicas"), n("port"))
		})
	}
	return nil
}

// replica is one of the servers a replicated target started.
type replica struct {
	l    *launched
	url  string // scheme://host:port
	addr string // host:port
	pin  []int
	// conns counts the connections (workers) given it over the run, a fresh pool each
	// repetition; the workers themselves count their requests, read back after the run.
	conns   int
	workers []*countingWorker
}

// replicaSet is what a served target keeps of its replicas: none for a single server.
type replicaSet struct {
	pool      []*replica
	launching int // the replica being launched
	next      int // the replica the next worker's connection goes to
	mu        sync.Mutex
	died      chan struct{}
	diedErr   error
}

// launchAll starts the replicas, one launch each, or one server when not replicated.
func (s *served) launchAll(ctx context.Context, launch func(context.Context) error) error {
	if s.replicas <= 1 {
		return launch(ctx)
	}
	for i := range s.replicas {
		r := &replica{l: &s.launched}
		if i > 0 {
			r.l = new(launched)
		}
		s.rs.pool = append(s.rs.pool, r)
		s.rs.launching = i
		if err := launch(ctx); err != nil {
			s.stopReplicas()
			return fmt.Errorf("replica %d of %d: %w", i+1, s.replicas, err)
		}
		r.url = s.url
	}
	s.url = s.rs.pool[0].url
	s.rs.died = make(chan struct{})
	var once sync.Once
	for i, r := range s.rs.pool {
		go func() {
			<-r.l.Died()
			once.Do(func() {
				s.rs.diedErr = fmt.Errorf("replica %d of %d: %w", i+1, len(s.rs.pool), r.l.Err())
				close(s.rs.died)
			})
		}()
	}
	return nil
}

// nextLaunch is where the server being launched is kept and the CPUs it is pinned to: the
// target's own when not replicated; else the replica's, each replica its own share of the
// CPUs given when there are at least as many as replicas (the replicas take turns on them
// otherwise: all share them).
func (s *served) nextLaunch(addr string) (*launched, []int) {
	if len(s.rs.pool) == 0 {
		return &s.launched, s.common.PinCPUs
	}
	r := s.rs.pool[s.rs.launching]
	r.addr = addr
	r.pin = replicaCPUs(s.common.PinCPUs, s.rs.launching, s.replicas)
	return r.l, r.pin
}

// replicaCPUs is replica i of k's share of cpus: a contiguous slice of them when there are at
// least k, all of them otherwise.
func replicaCPUs(cpus []int, i, k int) []int {
	if len(cpus) < k || k <= 1 {
		return cpus
	}
	per, rest := len(cpus)/k, len(cpus)%k
	from := i*per + min(i, rest)
	n := per
	if i < rest {
		n++
	}
	return cpus[from : from+n]
}

// endpointFor is the endpoint the next worker's connection goes to and the replica it counts
// against: round robin over the replicas, the same requests (Host header included, as behind
// a Service) sent to each one's address.
func (s *served) endpointFor() (httpload.Endpoint, *replica) {
	if len(s.rs.pool) == 0 {
		return s.endpoint, nil
	}
	s.rs.mu.Lock()
	defer s.rs.mu.Unlock()
	r := s.rs.pool[s.rs.next%len(s.rs.pool)]
	s.rs.next++
	r.conns++
	e := s.endpoint
	e.Addr = r.addr
	return e, r
}

// counted is w counting its requests against r, when replicated.
func (s *served) counted(w *httpWorker, r *replica) Decider {
	if r == nil {
		return w
	}
	c := &countingWorker{httpWorker: w}
	s.rs.mu.Lock()
	r.workers = append(r.workers, c)
	s.rs.mu.Unlock()
	return c
}

// countingWorker counts the requests one connection sent: its own counter, read only after
// the load that drove it has returned, so nothing is shared on the measured path.
type countingWorker struct {
	*httpWorker
	sent int64
}

// It forwards its connection's Close and Reconnects by embedding the worker.
var _ interface {
	Closer
	Reconnector
} = (*countingWorker)(nil)

func (c *countingWorker) Decide(ctx context.Context, i int) verify.Outcome {
	c.sent++
	return c.httpWorker.Decide(ctx, i)
}

// Died is closed when any replica exits before it is stopped.
func (s *served) Died() <-chan struct{} {
	if len(s.rs.pool) == 0 {
		return s.launched.Died()
	}
	return s.rs.died
}

func (s *served) Err() error {
	if len(s.rs.pool) == 0 {
		return s.launched.Err()
	}
	return s.rs.diedErr
}

// stopReplicas stops every replica started, or the one server.
func (s *served) stopReplicas() error {
	if len(s.rs.pool) == 0 {
		return s.stop()
	}
	var errs []error
	for i, r := range s.rs.pool {
		if err := r.l.stop(); err != nil {
			errs = append(errs, fmt.Errorf("replica %d: %w", i+1, err))
		}
	}
	return errors.Join(errs...)
}

// replicaInfo records the replicas: where each listened, its process and CPUs, the
// connections given it and the requests sent to it so far.
func (s *served) replicaInfo() []result.Replica {
	s.rs.mu.Lock()
	defer s.rs.mu.Unlock()
	var out []result.Replica
	for i, r := range s.rs.pool {
		info := result.Replica{Index: i + 1, URL: r.url, CPUs: sut.FormatCPUs(r.pin), Connections: r.conns}
		if r.l.server != nil {
			info.PID = r.l.server.PID()
		}
		for _, w := range r.workers {
			info.Requests += w.sent
		}
		out = append(out, info)
	}
	return out
}

// replicasOverHTTP2 refuses replicas with http2: the workers share a few HTTP/2 connections
// rather than one each, so spreading connections round robin would send every request to the
// first replicas and leave the rest idle, which is not what a replicated run means to measure.
func replicasOverHTTP2(replicas int, h HTTP2Config) error {
	if replicas <= 1 || !h.HTTP2 {
		return nil
	}
	return optionError("replicas", func(n func(string) string) string {
		return fmt.Sprintf("%s spreads one connection per worker over the servers; %s shares a few connections among all workers: give one or the other", n("replicas"), n("http2"))
	})
}
