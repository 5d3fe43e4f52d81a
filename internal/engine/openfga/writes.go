package openfga

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	openfgav1 "github.com/openfga/api/proto/openfga/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/authzbench/authzbench/internal/change"
	"github.com/authzbench/authzbench/internal/kinds"
	// The consistency option this engine's ConsistencySetting reads.
	_ "github.com/authzbench/authzbench/internal/kinds/consistencyflag"
	"github.com/authzbench/authzbench/internal/workload"
)

// A run whose world changes (--changes) writes into OpenFGA as its users do: a Write of tuples
// written and deleted, into the store the workload was loaded into, under its model. The change's
// form is the Write's body as OpenFGA's HTTP API takes it ({"writes": {"tuple_keys": [...]},
// "deletes": {"tuple_keys": [...]}}), the store and model left to the target.

// Write is a built-in family's change as OpenFGA takes it (engine.Writer): its relationships
// written and deleted, as tuples.
func (registered) Write(w *workload.Workload, c workload.Change) (json.RawMessage, error) {
	if len(c.Writes)+len(c.Deletes) == 0 {
		return nil, fmt.Errorf("workload %s: change %q writes no relationships, and OpenFGA takes tuple writes and deletes", w.Name, c.What)
	}
	req := &openfgav1.WriteRequest{}
	if len(c.Writes) > 0 {
		req.Writes = &openfgav1.WriteRequestWrites{}
		for _, r := range c.Writes {
			req.Writes.TupleKeys = append(req.Writes.TupleKeys, tupleKey(r))
		}
	}
	if len(c.Deletes) > 0 {
		req.Deletes = &openfgav1.WriteRequestDeletes{}
		for _, r := range c.Deletes {
			k := tupleKey(r)
			req.Deletes.TupleKeys = append(req.Deletes.TupleKeys, &openfgav1.TupleKeyWithoutCondition{User: k.User, Relation: k.Relation, Object: k.Object})
		}
	}
	return protojson.MarshalOptions{UseProtoNames: true}.Marshal(req)
}

// CheckWrite reads a changes file's write as OpenFGA's (engine.WriteChecker): a Write's body,
// strictly, with a tuple to write or delete and no store or model of its own.
func (registered) CheckWrite(form json.RawMessage) error {
	_, err := readWrite(form)
	return err
}

// readWrite reads a change's form into a Write request, without its store and model.
func readWrite(form json.RawMessage) (*openfgav1.WriteRequest, error) {
	req := &openfgav1.WriteRequest{}
	if err := protojson.Unmarshal(form, req); err != nil {
		return nil, fmt.Errorf(`not an OpenFGA Write body: %v; want {"writes": {"tuple_keys": [{"user": "user:anne", "relation": "viewer", "object": "document:1"}]}, "deletes": {"tuple_keys": [...]}}`, err)
	}
	if req.GetStoreId() != "" || req.GetAuthorizationModelId() != "" {
		return nil, errors.New("a Write's store_id and authorization_model_id are the run's: leave them out")
	}
	if len(req.GetWrites().GetTupleKeys())+len(req.GetDeletes().GetTupleKeys()) == 0 {
		return nil, errors.New(`an OpenFGA Write with no tuple to write or delete: give "writes" or "deletes"`)
	}
	return req, nil
}

// tupleWriter applies each change with a Write into one store: OpenFGA answers once the tuples
// are committed to its datastore.
type tupleWriter struct {
	store, model string
	write        func(ctx context.Context, req *openfgav1.WriteRequest) error
}

func (a *tupleWriter) Apply(ctx context.Context, _ int, c change.Change) change.Ack {
	req, err := readWrite(c.Form)
	if err != nil {
		return change.Ack{Class: "refused", Err: err}
	}
	req.StoreId, req.AuthorizationModelId = a.store, a.model
	if err := a.write(ctx, req); err != nil {
		return writeFailed(ctx, err)
	}
	return change.Ack{}
}

// writeFailed classifies a Write OpenFGA did not acknowledge: what it refused (a tuple that
// exists already, or is missing, or that its model does not allow), a conflict between writes,
// a timeout, or a transport failure.
func writeFailed(ctx context.Context, err error) change.Ack {
	if ctx.Err() != nil {
		return change.Ack{Class: "timeout", Err: err}
	}
	st, ok := status.FromError(err)
	if !ok {
		return change.Ack{Class: "error", Err: err}
	}
	code := st.Code()
	err = fmt.Errorf("openfga write: %s (%s)", st.Message(), code)
	// In process, OpenFGA's server answers with its own codes (openfgav1.ErrorCode and kin):
	// 2000s its validation (write_failed_due_to_invalid_input, 2017), 3500 throttling, 4000s
	// internal (4004 deadline, 4005 already exists, 4008 aborted, 4010 unavailable), 5000s not
	// found; over the wire, gRPC's.
	switch {
	case code == codes.InvalidArgument || code == codes.FailedPrecondition || code == codes.NotFound,
		code >= 2000 && code < 3000, code >= 5000 && code < 6000, code == 4007:
		return change.Ack{Class: "refused", Err: err}
	case code == codes.Aborted || code == codes.AlreadyExists || code == 4005 || code == 4008:
		return change.Ack{Class: "conflict", Err: err}
	case code == codes.DeadlineExceeded || code == 4004:
		return change.Ack{Class: "timeout", Err: err}
	case code == codes.ResourceExhausted || code == 3500 || code == 4006:
		return change.Ack{Class: "throttled", Err: err}
	case code == codes.Unavailable || code == 4010:
		return change.Ack{Class: "transport", Err: err}
	}
	return change.Ack{Class: "error", Err: err}
}

// Writer applies changes through OpenFGA's Server.Write in process (kinds.Writable). Over the
// run's shared engine, the target first gets stores of its own, loaded from the workload as the
// shared ones were, so that its writes change neither another target's world nor the next
// run's: a copy made before the clock.
func (t *openfgaInproc) Writer() (change.Applier, error) {
	if t.engine == nil {
		return nil, errors.New("the OpenFGA engine is not started")
	}
	if t.over == nil {
		stores, err := WriteFixture(context.Background(), t.engine.Server(), t.fixture)
		t.own = stores
		if err != nil {
			return nil, fmt.Errorf("a store of the target's own for its writes: %w", err)
		}
		// New requests, aimed at the target's own stores: the shared ones stay the other targets'.
		requests := make([]*openfgav1.CheckRequest, len(t.fixture.Assertions))
		for i, a := range t.fixture.Assertions {
			if requests[i], err = stores.Prepare(a); err != nil {
				return nil, err
			}
			requests[i].Consistency = t.settings.preference()
		}
		t.requests = requests
	}
	stores := t.engine.Stores
	if t.own != nil {
		stores = t.own
	}
	if len(stores.Stores) != 1 {
		return nil, fmt.Errorf("the workload's tuples are in %d stores; a run with changes writes into one", len(stores.Stores))
	}
	srv := t.engine.Server()
	return &tupleWriter{store: stores.Stores[0], model: stores.Models[0], write: func(ctx context.Context, req *openfgav1.WriteRequest) error {
		_, err := srv.Write(ctx, req)
		return err
	}}, nil
}

// Writer applies changes through the server's own API (kinds.Writable): HTTP's POST
// /stores/{id}/write, or gRPC's Write, as the checks are asked.
func (t *openfgaServer) Writer() (change.Applier, error) {
	if t.loaded == nil {
		return nil, errors.New("the OpenFGA server is not started")
	}
	if len(t.loaded.Stores) != 1 {
		return nil, fmt.Errorf("the workload's tuples are in %d stores; a run with changes writes into one", len(t.loaded.Stores))
	}
	a := &tupleWriter{store: t.loaded.Stores[0], model: t.loaded.Models[0]}
	if t.api == "grpc" {
		conn, err := t.dial()
		if err != nil {
			return nil, err
		}
		client := openfgav1.NewOpenFGAServiceClient(conn)
		a.write = func(ctx context.Context, req *openfgav1.WriteRequest) error {
			_, err := client.Write(ctx, req)
			return err
		}
		return a, nil
	}
	client, url := t.WriteClient(), strings.TrimRight(t.URL(), "/")
	a.write = func(ctx context.Context, req *openfgav1.WriteRequest) error {
		body, err := HTTPBody(req)
		if err != nil {
			return err
		}
		hr, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/stores/"+req.GetStoreId()+"/write", bytes.NewReader(body))
		if err != nil {
			return err
		}
		hr.Header.Set("Content-Type", "application/json")
		if ack := kinds.SendWrite(client, hr); ack.Class != "" {
			return &httpWriteError{ack}
		}
		return nil
	}
	return &httpTupleWriter{a}, nil
}

// httpWriteError carries the class the HTTP write was given (http_400, transport, timeout).
type httpWriteError struct{ ack change.Ack }

func (e *httpWriteError) Error() string { return e.ack.Err.Error() }

// httpTupleWriter keeps an HTTP write's own class: OpenFGA's HTTP status says what gRPC's code
// would.
type httpTupleWriter struct{ *tupleWriter }

func (a *httpTupleWriter) Apply(ctx context.Context, v int, c change.Change) change.Ack {
	ack := a.tupleWriter.Apply(ctx, v, c)
	var he *httpWriteError
	if errors.As(ack.Err, &he) {
		return he.ack
	}
	return ack
}

// The consistency a check asks of OpenFGA (kinds.Consistent), in its words.
const (
	minimizeLatency   = "MINIMIZE_LATENCY"
	higherConsistency = "HIGHER_CONSISTENCY"
)

// ConsistencySetting is the consistency option of OpenFGA's kinds: the ConsistencyPreference each
// Check carries. Empty asks none, and OpenFGA's default is MINIMIZE_LATENCY.
type ConsistencySetting struct {
	Consistency string `yaml:"consistency"`
}

// check refuses a consistency OpenFGA does not name.
func (c ConsistencySetting) check(kind string) error {
	switch c.Consistency {
	case "", minimizeLatency, higherConsistency:
		return nil
	}
	return kinds.NewOptionError("consistency", func(n func(string) string) string {
		return fmt.Sprintf("%s %q: %s takes OpenFGA's %s or %s", n("consistency"), c.Consistency, kind, minimizeLatency, higherConsistency)
	})
}

// preference is the consistency as a Check's field.
func (c ConsistencySetting) preference() openfgav1.ConsistencyPreference {
	switch c.Consistency {
	case minimizeLatency:
		return openfgav1.ConsistencyPreference_MINIMIZE_LATENCY
	case higherConsistency:
		return openfgav1.ConsistencyPreference_HIGHER_CONSISTENCY
	}
	return openfgav1.ConsistencyPreference_UNSPECIFIED
}

// promise is what OpenFGA promises under the consistency, with its check caches on for ttl
// (0: off, OpenFGA's default): MINIMIZE_LATENCY may answer from a cache for up to its TTL;
// HIGHER_CONSISTENCY skips the caches and reads the datastore.
func (c ConsistencySetting) promise(ttl time.Duration) kinds.Consistency {
	p := kinds.Consistency{Name: c.Consistency}
	switch {
	case c.Consistency == higherConsistency:
		p.Why = "HIGHER_CONSISTENCY skips OpenFGA's check caches and reads its datastore"
	case ttl > 0:
		p.Stale = ttl
		p.Why = fmt.Sprintf("MINIMIZE_LATENCY may answer from OpenFGA's check cache, for up to its TTL (%s)", ttl)
	default:
		p.Why = "OpenFGA's check caches are off (its default), so MINIMIZE_LATENCY reads its datastore too"
	}
	if c.Consistency == "" {
		p.Name, p.Default = minimizeLatency, true
		p.Why = "OpenFGA's default; " + p.Why
	}
	return p
}

// Promise is openfga/inproc's consistency, with the check caches its settings turn on
// (--openfga-check-query-cache): OpenFGA's defaults otherwise, caches off.
func (c *OpenFGAInprocConfig) Promise() kinds.Consistency {
	return c.ConsistencySetting.promise(c.CacheSettings.checkTTL())
}

// Promise is openfga/server's consistency, with the check caches its settings or its server
// arguments turn on (--openfga-check-query-cache, --sut-arg=--check-query-cache-enabled):
// OpenFGA's defaults otherwise, caches off.
func (c *OpenFGAServerConfig) Promise() kinds.Consistency {
	return c.ConsistencySetting.promise(max(cacheTTL(c.ServerConfig.Args), c.CacheSettings.checkTTL()))
}

// cacheTTL is the longest TTL of the check caches args turn on (OpenFGA's run flags), 0 when
// they turn none on.
func cacheTTL(args []string) time.Duration {
	var longest time.Duration
	for _, cache := range []string{"check-query-cache", "check-iterator-cache"} {
		on, ttl := false, 10*time.Second // OpenFGA's default TTL for both
		for i, a := range args {
			name, value, given := strings.Cut(strings.TrimLeft(a, "-"), "=")
			if !given && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
				value = args[i+1]
			}
			switch name {
			case cache + "-enabled":
				on = value != "false"
			case cache + "-ttl":
				if d, err := time.ParseDuration(value); err == nil {
					ttl = d
				}
			}
		}
		if on {
			longest = max(longest, ttl)
		}
	}
	return longest
}
