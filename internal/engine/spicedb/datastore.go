package spicedb

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"

	v1 "github.com/authzed/authzed-go/proto/authzed/api/v1"
	"github.com/authzed/spicedb/pkg/cmd/datastore/dsconfig"
	"github.com/authzed/spicedb/pkg/tuple"
	"google.golang.org/grpc"
	"google.golang.org/grpc/status"

	"github.com/authzbench/authzbench/internal/datastore"
)

// Marker is how SpiceDB's schema is told apart in a PostgreSQL database: alembic's version
// table, which its migrations keep, and the tables that hold its schema and relationships.
var Marker = datastore.Marker{Engine: "SpiceDB", VersionTable: "alembic_version", StoreTables: []string{"namespace_config", "relation_tuple"}}

// datastoreURIEnv is the variable SpiceDB's serve and migrate read the datastore's URI from:
// given there, not on the command line a result records, a user's password stays out of it.
const datastoreURIEnv = "SPICEDB_DATASTORE_CONN_URI"

// poolArgs are serve's flags for the pool s asks for: the read pool as given, the write pool
// half of it, SpiceDB's own ratio (its defaults are 20 and 10); none for SpiceDB's defaults.
func poolArgs(s datastore.Settings) []string {
	var args []string
	if s.MaxConns > 0 {
		args = append(args, "--datastore-conn-pool-read-max-open", strconv.Itoa(s.MaxConns),
			"--datastore-conn-pool-write-max-open", strconv.Itoa(max(1, s.MaxConns/2)))
	}
	if s.MinConns > 0 {
		args = append(args, "--datastore-conn-pool-read-min-open", strconv.Itoa(s.MinConns),
			"--datastore-conn-pool-write-min-open", strconv.Itoa(s.MinConns/2))
	}
	return args
}

// poolString says the pool in SpiceDB's flags, its defaults filled in.
func poolString(s datastore.Settings) string {
	read, write := dsconfig.DefaultReadConnPool(), dsconfig.DefaultWriteConnPool()
	if s.MaxConns > 0 {
		read.MaxOpenConns, write.MaxOpenConns = s.MaxConns, max(1, s.MaxConns/2)
	}
	if s.MinConns > 0 {
		read.MinOpenConns, write.MinOpenConns = s.MinConns, s.MinConns/2
	}
	// SpiceDB refuses a minimum above the maximum; its defaults keep min = max.
	read.MinOpenConns, write.MinOpenConns = min(read.MinOpenConns, read.MaxOpenConns), min(write.MinOpenConns, write.MaxOpenConns)
	return fmt.Sprintf("SpiceDB --datastore-conn-pool-read-max-open %d --datastore-conn-pool-read-min-open %d --datastore-conn-pool-write-max-open %d --datastore-conn-pool-write-min-open %d",
		read.MaxOpenConns, read.MinOpenConns, write.MaxOpenConns, write.MinOpenConns)
}

// migrate runs SpiceDB's own migrations (`spicedb migrate head`) with the server binary that is
// to serve the database, and returns the revision they reached.
func migrate(ctx context.Context, server ServerCommand, uri string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, server.Path, "migrate", "head", "--datastore-engine", "postgres", "--skip-release-check", "--log-level", "warn")
	cmd.Env = append(os.Environ(), datastoreURIEnv+"="+uri)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("SpiceDB's migrations (%s migrate head): %v: %s", server.Path, err, strings.TrimSpace(string(out)))
	}
	head, err := exec.CommandContext(ctx, server.Path, "head", "--datastore-engine", "postgres", "--skip-release-check").Output()
	if err != nil {
		return "SpiceDB migrations, head", nil
	}
	return "SpiceDB migration " + strings.TrimSpace(string(head)), nil
}

// importBatch is how many relationships go in one message of ImportBulkRelationships.
const importBatch = 1000

// ImportInto writes f's schema and relationships into a running SpiceDB as its bulk path does:
// the schema, then every relationship in one ImportBulkRelationships stream, which SpiceDB
// writes with its datastore's bulk load (COPY on PostgreSQL). An import refuses a relationship
// the server holds already: it is for an empty datastore. The token returned is that of a
// write after the import (the last relationship touched again), for checks to ask for data at
// least as fresh. It is setup: call it before the clock.
func ImportInto(ctx context.Context, conn grpc.ClientConnInterface, f *Fixture) (*v1.ZedToken, error) {
	written, err := v1.NewSchemaServiceClient(conn).WriteSchema(ctx, &v1.WriteSchemaRequest{Schema: f.Schema})
	if err != nil {
		return nil, fmt.Errorf("%s:%d: spicedb refuses the schema: %s", f.SchemaFile, f.SchemaLine, status.Convert(err).Message())
	}
	if len(f.Relationships) == 0 {
		return written.GetWrittenAt(), nil
	}
	perms := v1.NewPermissionsServiceClient(conn)
	stream, err := perms.ImportBulkRelationships(ctx)
	if err != nil {
		return nil, fmt.Errorf("spicedb import: %s", status.Convert(err).Message())
	}
	for batch := range slices.Chunk(f.Relationships, importBatch) {
		rels := make([]*v1.Relationship, len(batch))
		for i, r := range batch {
			rels[i] = tuple.ToV1Relationship(r.Rel)
		}
		if err := stream.Send(&v1.ImportBulkRelationshipsRequest{Relationships: rels}); err != nil {
			break // the server's error comes with CloseAndRecv
		}
	}
	resp, err := stream.CloseAndRecv()
	if err != nil {
		return nil, fmt.Errorf("%s to %s: spicedb refuses the import: %s", f.Relationships[0].Origin, f.Relationships[len(f.Relationships)-1].Origin, status.Convert(err).Message())
	}
	if n := resp.GetNumLoaded(); n != uint64(len(f.Relationships)) {
		return nil, fmt.Errorf("spicedb imported %d relationships of %d", n, len(f.Relationships))
	}
	last := f.Relationships[len(f.Relationships)-1]
	touched, err := perms.WriteRelationships(ctx, &v1.WriteRelationshipsRequest{Updates: []*v1.RelationshipUpdate{
		{Operation: v1.RelationshipUpdate_OPERATION_TOUCH, Relationship: tuple.ToV1Relationship(last.Rel)}}})
	if err != nil {
		return nil, fmt.Errorf("%s: spicedb: %s", last.Origin, status.Convert(err).Message())
	}
	return touched.GetWrittenAt(), nil
}
