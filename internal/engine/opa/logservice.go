package opa

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/authzbench/authzbench/internal/result"
)

// ServiceBehaviour is how the log service inside authzbench answers OPA's uploads.
type ServiceBehaviour string

const (
	ServiceHealthy ServiceBehaviour = "healthy" // accepts every upload at once
	ServiceSlow    ServiceBehaviour = "slow"    // accepts every upload after a given latency
	ServiceFailing ServiceBehaviour = "failing" // answers every upload with HTTP 500
	ServiceDown    ServiceBehaviour = "down"    // listens on nothing: OPA's connections are refused
)

// ServiceBehaviours are the behaviours the log service takes, as --decision-log-service names them.
var ServiceBehaviours = []ServiceBehaviour{ServiceHealthy, ServiceSlow, ServiceFailing, ServiceDown}

// logService is the decision log service inside authzbench: a loopback HTTP server that takes
// OPA's uploads (POST of a gzipped JSON array of events) and notes each decision ID it accepts,
// so that every decision of a run can be accounted for. Beside it a control listener, always
// up, takes the reports of OPA's count plugin (logcount.go) at OPA's stop: once OPA's own final
// flush is over, the service drains what OPA still holds, accepting whatever the behaviour, so
// that the decisions left in the buffer are identified rather than inferred.
type logService struct {
	behaviour ServiceBehaviour
	latency   time.Duration
	addr      string // where uploads go, down or not
	// controlURL is where the count plugin reports.
	controlURL string

	data, control *http.Server
	dataLn        net.Listener

	// active are the uploads being answered, waited for before the account is taken: a slow
	// answer still sleeping learns only at its end whether OPA gave up on it.
	active sync.WaitGroup

	mu       sync.Mutex
	draining bool
	received map[string]int // decision ID to accepted copies, during the run and the final flush
	drained  map[string]int // decision ID to copies accepted in the drain after the final flush
	uploads  result.DecisionLogUploads
	bad      []string // uploads that were no decision log, a finding
	flushed  *countReport
	final    *countReport
	reported chan struct{} // closed when the final report arrives
}

// countReport is what the count plugin inside OPA reports: how many decisions OPA handed its
// decision logger, OPA's drop counters and OPA's own measure of its buffer.
type countReport struct {
	Logged     int64            `json:"logged"`
	Console    bool             `json:"console"`
	Counters   map[string]int64 `json:"counters"`
	BufferType string           `json:"buffer_type"`
	Buffer     int64            `json:"buffer"`
	Error      string           `json:"error,omitempty"`
}

// startLogService listens for uploads on addr (127.0.0.1:0 picks a port) unless the behaviour is
// down, which takes a port and closes it, and for the count plugin's reports on a port of its
// own. An address that cannot be listened on is the caller's bad input.
func startLogService(addr string, behaviour ServiceBehaviour, latency time.Duration, withUploads bool) (*logService, error) {
	s := &logService{behaviour: behaviour, latency: latency, received: map[string]int{}, drained: map[string]int{},
		reported: make(chan struct{})}
	if withUploads {
		ln, err := listenLoopback(addr)
		if err != nil {
			return nil, err
		}
		s.addr = ln.Addr().String()
		if behaviour == ServiceDown {
			ln.Close() // nothing answers here until the drain
		} else {
			s.serveUploads(ln)
		}
	}
	cl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		s.close()
		return nil, fmt.Errorf("decision log service: listen for OPA's reports: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /flushed", s.onFlushed)
	mux.HandleFunc("POST /drained", s.onDrained)
	s.control = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go s.control.Serve(cl) //nolint:errcheck // ends with close
	s.controlURL = "http://" + cl.Addr().String()
	return s, nil
}

// listenLoopback listens on addr, which must be a loopback address: the service is authzbench's
// own and takes no traffic from elsewhere.
func listenLoopback(addr string) (net.Listener, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("decision log service address %q: %w", addr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, fmt.Errorf("decision log service address %q: not a loopback address (127.0.0.1:PORT)", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("decision log service: cannot listen on %s: %w", addr, err)
	}
	return ln, nil
}

func (s *logService) serveUploads(ln net.Listener) {
	s.dataLn = ln
	s.data = &http.Server{Handler: http.HandlerFunc(s.upload), ReadHeaderTimeout: 10 * time.Second,
		ConnContext: func(ctx context.Context, _ net.Conn) context.Context {
			s.mu.Lock()
			defer s.mu.Unlock()
			return context.WithValue(ctx, drainConn{}, s.draining)
		}}
	go s.data.Serve(ln) //nolint:errcheck // ends with close
}

// URL is where OPA uploads; empty without uploads.
func (s *logService) URL() string {
	if s.addr == "" {
		return ""
	}
	return "http://" + s.addr
}

// drainConn keys whether a connection to the service was opened in the drain.
type drainConn struct{}

// upload takes one of OPA's uploads as the behaviour says; during the drain it takes every one.
// An upload belongs to the drain by its connection, opened after OPA reported its final flush
// over, not by the moment its handler runs: an upload of the final flush that OPA abandoned at
// its deadline may be read only after that report, and accepting it then would count chunks
// that OPA, never answered, puts back and sends again in the drain (twice drained).
func (s *logService) upload(w http.ResponseWriter, r *http.Request) {
	s.active.Add(1)
	defer s.active.Done()
	draining, _ := r.Context().Value(drainConn{}).(bool)
	body, err := io.ReadAll(r.Body)
	if err != nil {
		s.count(func(u *result.DecisionLogUploads) { u.Abandoned++ })
		return
	}
	if !draining {
		switch s.behaviour {
		case ServiceFailing:
			s.count(func(u *result.DecisionLogUploads) { u.Refused++ })
			http.Error(w, "authzbench's log service is set to fail", http.StatusInternalServerError)
			return
		case ServiceSlow:
			select {
			case <-time.After(s.latency):
			case <-r.Context().Done():
				// OPA gave up on this upload and keeps its events: they are not received.
				s.count(func(u *result.DecisionLogUploads) { u.Abandoned++ })
				return
			}
		}
	}
	ids, err := decisionIDs(r.Header.Get("Content-Encoding"), body)
	if err != nil {
		s.mu.Lock()
		s.bad = append(s.bad, err.Error())
		s.mu.Unlock()
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if r.Context().Err() != nil {
		// The client is gone: whatever it makes of this upload, it was not answered.
		s.count(func(u *result.DecisionLogUploads) { u.Abandoned++ })
		return
	}
	s.mu.Lock()
	into := s.received
	if draining {
		into = s.drained
		s.uploads.Drained++
	} else {
		s.uploads.Accepted++
	}
	for _, id := range ids {
		into[id]++
	}
	s.mu.Unlock()
	w.WriteHeader(http.StatusOK)
}

func (s *logService) count(f func(*result.DecisionLogUploads)) {
	s.mu.Lock()
	f(&s.uploads)
	s.mu.Unlock()
}

// decisionIDs reads the decision IDs of an upload: a JSON array of OPA's events, gzipped as OPA
// sends them.
func decisionIDs(encoding string, body []byte) ([]string, error) {
	var r io.Reader = bytes.NewReader(body)
	if encoding == "gzip" {
		z, err := gzip.NewReader(r)
		if err != nil {
			return nil, fmt.Errorf("upload: not gzip: %w", err)
		}
		r = z
	}
	var events []struct {
		DecisionID string `json:"decision_id"`
	}
	if err := json.NewDecoder(r).Decode(&events); err != nil {
		return nil, fmt.Errorf("upload: not a JSON array of decision log events: %w", err)
	}
	ids := make([]string, 0, len(events))
	for i, e := range events {
		if e.DecisionID == "" {
			return nil, fmt.Errorf("upload: event %d has no decision_id", i+1)
		}
		ids = append(ids, e.DecisionID)
	}
	return ids, nil
}

// onFlushed is OPA's report after its own final flush: from now on every upload on a new
// connection is the drain of what OPA still holds, accepted whatever the behaviour (a service
// that was down listens again on the same address).
func (s *logService) onFlushed(w http.ResponseWriter, r *http.Request) {
	var rep countReport
	if err := json.NewDecoder(r.Body).Decode(&rep); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.flushed, s.draining = &rep, true
	reopen := s.addr != "" && s.data == nil
	if s.data != nil {
		// OPA's connections of the final flush are closed once idle (or once answered), so
		// that the drain's uploads come on connections of their own.
		s.data.SetKeepAlivesEnabled(false)
	}
	s.mu.Unlock()
	if reopen {
		ln, err := net.Listen("tcp", s.addr)
		if err != nil {
			http.Error(w, fmt.Sprintf("listen again on %s for the drain: %v", s.addr, err), http.StatusServiceUnavailable)
			return
		}
		s.mu.Lock()
		s.serveUploads(ln)
		s.mu.Unlock()
	}
	w.WriteHeader(http.StatusOK)
}

// onDrained is OPA's last report, once its buffer was drained (or the drain gave up).
func (s *logService) onDrained(w http.ResponseWriter, r *http.Request) {
	var rep countReport
	if err := json.NewDecoder(r.Body).Decode(&rep); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	first := s.final == nil
	s.final = &rep
	s.mu.Unlock()
	if first {
		close(s.reported)
	}
	w.WriteHeader(http.StatusOK)
}

// wait waits up to d for OPA's last report.
func (s *logService) wait(d time.Duration) bool {
	select {
	case <-s.reported:
		return true
	case <-time.After(d):
		return false
	}
}

// settle waits for the uploads being answered, up to a slow service's latency and a second.
func (s *logService) settle() {
	done := make(chan struct{})
	go func() {
		s.active.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(s.latency + time.Second):
	}
}

func (s *logService) close() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	s.mu.Lock()
	data, control := s.data, s.control
	s.mu.Unlock()
	for _, srv := range []*http.Server{data, control} {
		if srv != nil {
			if err := srv.Shutdown(ctx); err != nil {
				srv.Close()
			}
		}
	}
}

// The names of OPA's decision log counters (plugins/logs), read at the end of a run.
const (
	counterRateLimit    = "decision_logs_dropped_rate_limit_exceeded"
	counterBuffer       = "decision_logs_dropped_buffer_size_limit_exceeded"
	counterBufferBytes  = "decision_logs_dropped_buffer_size_limit_bytes_exceeded"
	counterEncoding     = "decision_logs_encoding_failure"
	counterUploaded     = "decision_logs_chunks_uploaded"
	counterUploadFailed = "decision_logs_chunks_upload_failed"
	bufferTypeEvent     = "event"
	bufferTypeSize      = "size"
)

var opaCounters = []string{counterRateLimit, counterBuffer, counterBufferBytes, counterEncoding, counterUploaded, counterUploadFailed}

// account says where every decision OPA logged went, from what the service received and
// drained and what OPA reported at its stop.
func (s *logService) account() *result.DecisionLogAccount {
	s.mu.Lock()
	defer s.mu.Unlock()
	a := &result.DecisionLogAccount{Uploads: s.uploads}
	for _, bad := range s.bad {
		a.Error = joinError(a.Error, bad)
	}
	if s.final == nil {
		a.Error = joinError(a.Error, "OPA did not report at its stop (it was killed, or never started its decision logger)")
		a.Received = int64(len(s.received))
		return a
	}
	rep := s.final
	if rep.Error != "" {
		a.Error = joinError(a.Error, rep.Error)
	}
	a.Logged, a.OPACounters, a.BufferType = rep.Logged, rep.Counters, rep.BufferType
	if s.flushed != nil {
		a.OPABuffer = s.flushed.Buffer
	}
	if rep.Console {
		a.Console = rep.Logged
	}
	if s.addr == "" {
		return a // console alone: every decision logged was written to the console
	}
	for id, n := range s.received {
		a.Received++
		a.Duplicated += int64(n - 1)
		if m := s.drained[id]; m > 0 {
			a.Duplicated += int64(m)
		}
	}
	for id, n := range s.drained {
		if s.received[id] == 0 {
			a.StillBuffered++
			a.Duplicated += int64(n - 1)
		}
	}
	attribute(a, rep.Counters[counterUploadFailed])
	return a
}

// attribute splits the decisions logged but neither received nor still buffered between OPA's
// drop causes, as far as OPA's counters allow: OPA counts a dropped event once, but a dropped
// chunk of many events (the size buffer's drops, or a chunk put back after a failed upload) once
// too. What no counter explains is missing.
func attribute(a *result.DecisionLogAccount, failedUploads int64) {
	unreceived := a.Logged - a.Received - a.StillBuffered
	if unreceived < 0 {
		a.Unexpected, unreceived = -unreceived, 0
	}
	rl, buf := a.OPACounters[counterRateLimit], a.OPACounters[counterBuffer]
	// The rate limit is asked per event, except in the event buffer, which puts a failed
	// chunk back whole; the event buffer's own limit drops whole items, events unless failed
	// chunks were put back.
	perEventRL := a.BufferType == bufferTypeSize || failedUploads == 0
	perEventBuf := a.BufferType == bufferTypeEvent && failedUploads == 0
	switch {
	case unreceived == 0:
	case perEventRL && perEventBuf:
		a.DroppedRateLimit, a.DroppedBuffer = min(rl, unreceived), min(buf, unreceived-min(rl, unreceived))
		a.Missing = unreceived - a.DroppedRateLimit - a.DroppedBuffer
	case perEventRL:
		a.DroppedRateLimit = min(rl, unreceived)
		if rest := unreceived - a.DroppedRateLimit; buf > 0 {
			a.DroppedBuffer = rest
		} else {
			a.Missing = rest
		}
	case rl > 0 && buf > 0:
		a.DroppedEither = unreceived
	case rl > 0:
		a.DroppedRateLimit = unreceived
	case buf > 0:
		a.DroppedBuffer = unreceived
	default:
		a.Missing = unreceived
	}
}

func joinError(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}
