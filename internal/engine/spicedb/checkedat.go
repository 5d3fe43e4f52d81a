package spicedb

import (
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync/atomic"

	v1 "github.com/authzed/authzed-go/proto/authzed/api/v1"
	implv1 "github.com/authzed/spicedb/pkg/proto/impl/v1"
	"github.com/authzed/spicedb/pkg/zedtoken"

	"github.com/authzbench/authzbench/internal/datastore"
)

// In a run whose world changes, each CheckPermission answer of the SpiceDB server authzbench
// started is judged by the version it was decided at: the newest change whose write (its
// written_at token) the revision named by the answer's checked_at token sees. A ZedToken is a
// protobuf, base64-encoded, holding the datastore's revision as the datastore writes it as a
// string; SpiceDB's own pkg/zedtoken reads the token. The datastores' revision parsers are
// internal to SpiceDB, reachable from outside only through pkg/datastore/revisionparsing, which
// links every datastore SpiceDB has (CockroachDB, MySQL, Spanner and their clients: 323
// packages authzbench does not otherwise link), so the two authzbench runs SpiceDB over are read
// here, as SpiceDB writes them:
//
//   - memory (memdb): the revision is the commit's time in nanoseconds, a decimal integer;
//     revisions are totally ordered, and a check at revision c sees a write at w when w <= c.
//   - postgres: the revision is a PostgresRevision protobuf, base64-encoded: the snapshot the
//     reads are filtered by (xmin, xmax and the transactions in progress, relative to xmin) and,
//     for a write, its transaction id. Snapshots are only partially ordered (two taken while
//     different transactions ran are each ahead of the other), but the question here is not
//     which of two snapshots is newer: it is whether a write's transaction is visible in the
//     snapshot the check read, which is exactly how SpiceDB's PostgreSQL reads choose their rows
//     (pg_visible_in_snapshot on each row's transaction ids), and always has an answer.
//
// One answer cannot be placed: one whose revision sees every acknowledged write while the next
// write is in flight (sent, not yet acknowledged), at a revision that may be that write's or
// later. Its write token is not known yet, so that answer is judged by its decision, as every
// answer was before, and is not counted among those that named their version. A write that
// failed leaves the same doubt for every answer after it.

// revisionKind is how a datastore's revisions read and compare.
type revisionKind uint8

const (
	memdbRevisions revisionKind = iota + 1
	postgresRevisions
)

// revisionKindOf is the kind of revisions of the datastore a started server runs over.
func revisionKindOf(engine string) revisionKind {
	if engine == datastore.Postgres {
		return postgresRevisions
	}
	return memdbRevisions
}

// revision is one datastore revision, decoded.
type revision struct {
	// nanos is memdb's revision.
	nanos int64
	// PostgreSQL's snapshot (xip sorted), and txid, the transaction of a write (0 when the
	// revision names none).
	xmin, xmax, txid uint64
	xip              []uint64
}

// errNoRevision: a token whose revision this kind cannot read.
var errNoRevision = errors.New("no revision")

// decodeToken reads a ZedToken's revision.
func (k revisionKind) decodeToken(token string) (revision, error) {
	decoded, err := zedtoken.Decode(&v1.ZedToken{Token: token})
	if err != nil {
		return revision{}, err
	}
	var raw string
	switch v := decoded.GetVersionOneof().(type) {
	case *implv1.DecodedZedToken_V1:
		raw = v.V1.GetRevision()
	case *implv1.DecodedZedToken_DeprecatedV1Zookie:
		raw = strconv.FormatUint(v.DeprecatedV1Zookie.GetRevision(), 10)
	default:
		return revision{}, fmt.Errorf("zedtoken %q: %w", token, errNoRevision)
	}
	return k.parse(raw)
}

// parse reads a revision as the datastore writes it.
func (k revisionKind) parse(raw string) (revision, error) {
	if k == memdbRevisions {
		n, err := strconv.ParseInt(raw, 10, 64)
		if err != nil {
			return revision{}, fmt.Errorf("memdb revision %q: %w", raw, errNoRevision)
		}
		return revision{nanos: n}, nil
	}
	// PostgreSQL's older decimal form (a transaction id, no snapshot) is not read: SpiceDB has
	// not written it since it moved to snapshots.
	b, err := base64.StdEncoding.DecodeString(raw)
	if err != nil {
		return revision{}, fmt.Errorf("postgres revision %q: %w", raw, errNoRevision)
	}
	var pr implv1.PostgresRevision
	if err := pr.UnmarshalVT(b); err != nil {
		return revision{}, fmt.Errorf("postgres revision %q: %w", raw, errNoRevision)
	}
	r := revision{xmin: pr.GetXmin(), txid: pr.GetOptionalTxid()}
	r.xmax = uint64(int64(r.xmin) + pr.GetRelativeXmax())
	if rel := pr.GetRelativeXips(); len(rel) > 0 {
		r.xip = make([]uint64, len(rel))
		for i, x := range rel {
			r.xip[i] = uint64(int64(r.xmin) + x)
		}
		slices.Sort(r.xip)
	}
	return r, nil
}

// sees says whether a check at revision c reads the write made at w.
func (k revisionKind) sees(c, w revision) bool {
	if k == memdbRevisions {
		return w.nanos <= c.nanos
	}
	switch x := w.txid; {
	case x < c.xmin:
		return true
	case x >= c.xmax:
		return false
	default:
		_, running := slices.BinarySearch(c.xip, x)
		return !running
	}
}

// mayBeAfter says whether a check at c could see a write made after the one at last (the next
// write is sent only once last is acknowledged). memdb gives each commit a revision later than
// the one before. PostgreSQL's next write gets a transaction id at or past last's xmax (every id
// given before last's snapshot is below it, and last's own is too), which c sees only if its
// own xmax is past it.
func (k revisionKind) mayBeAfter(c, last revision) bool {
	if k == memdbRevisions {
		return c.nanos > last.nanos
	}
	return c.xmax > last.xmax
}

// writes are the revisions of the writes of a run: writes[0] the workload's load, writes[k]
// change k's. The writer replaces the whole on each change; answers read it without a lock.
type writes struct {
	at []revision
	// inDoubt: a write is in flight, or one failed (and may have been applied all the same).
	inDoubt bool
}

// versions maps the checked_at of the answers of one started server to the versions of the run's
// world. Nil state until the run's writer starts: a run without changes decodes nothing.
type versions struct {
	kind  revisionKind
	load  revision
	state atomic.Pointer[writes]
}

// newVersions reads the load's token; an error leaves the answers judged by their decisions.
func newVersions(kind revisionKind, loaded *v1.ZedToken) (*versions, error) {
	r, err := kind.decodeToken(loaded.GetToken())
	if err != nil {
		return nil, fmt.Errorf("the load's written_at: %w", err)
	}
	if kind == postgresRevisions && r.txid == 0 {
		return nil, errors.New("the load's written_at names no transaction")
	}
	return &versions{kind: kind, load: r}, nil
}

// start is the writer's: from now on the answers name their versions.
func (v *versions) start() {
	if v != nil {
		v.state.Store(&writes{at: []revision{v.load}})
	}
}

// sending marks a write in flight.
func (v *versions) sending() {
	if v == nil {
		return
	}
	if s := v.state.Load(); s != nil && !s.inDoubt {
		v.state.Store(&writes{at: s.at, inDoubt: true})
	}
}

// written records change version's acknowledged write; a token that cannot be read, or a
// version out of turn, leaves every later answer in doubt.
func (v *versions) written(version int, token *v1.ZedToken) {
	if v == nil {
		return
	}
	s := v.state.Load()
	if s == nil {
		return
	}
	r, err := v.kind.decodeToken(token.GetToken())
	if err != nil || version != len(s.at) || (v.kind == postgresRevisions && r.txid == 0) {
		v.state.Store(&writes{at: s.at, inDoubt: true})
		return
	}
	// Appended in place past the answers' length, which they never read.
	v.state.Store(&writes{at: append(s.at, r)})
}

// failed leaves every later answer in doubt: the write may have been applied.
func (v *versions) failed() {
	if v == nil {
		return
	}
	if s := v.state.Load(); s != nil {
		v.state.Store(&writes{at: s.at, inDoubt: true})
	}
}

// versionOf is the version a check at c was decided at: the newest change whose write it sees.
// ok is false when it cannot be told: a revision that may also see the write in flight, or one
// that does not see the load's last write (PostgreSQL's load imports, then touches a relationship
// again for its token: a snapshot between the two holds the whole workload all the same).
func (v *versions) versionOf(c revision) (version int, ok bool) {
	s := v.state.Load()
	if s == nil {
		return 0, false
	}
	// The writes a revision sees are a prefix: each was acknowledged before the next was sent.
	n, _ := slices.BinarySearchFunc(s.at, c, func(w, c revision) int {
		if v.kind.sees(c, w) {
			return -1
		}
		return 1
	})
	if n == 0 || n == len(s.at) && s.inDoubt && v.kind.mayBeAfter(c, s.at[n-1]) {
		return 0, false
	}
	return n - 1, true
}

// tokenCache is one worker's last checked_at and its revision: answers come at a few revisions
// (SpiceDB's quantized snapshot, the head between two writes), so most skip decoding.
type tokenCache struct {
	token string
	at    revision
	err   error
	set   bool
}

// version is the version an answer's checked_at names, for judging it; ok false when it names
// none that can be told (or no run with changes).
func (v *versions) version(c *tokenCache, checkedAt *v1.ZedToken) (version int, ok bool) {
	if v == nil || v.state.Load() == nil {
		return 0, false
	}
	if token := checkedAt.GetToken(); !c.set || token != c.token {
		c.token, c.set = token, true
		c.at, c.err = v.kind.decodeToken(token)
	}
	if c.err != nil {
		return 0, false
	}
	return v.versionOf(c.at)
}
