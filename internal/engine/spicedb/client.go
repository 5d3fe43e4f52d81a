package spicedb

import (
	"context"
	"fmt"
	"slices"

	v1 "github.com/authzed/authzed-go/proto/authzed/api/v1"
	"github.com/authzed/spicedb/pkg/tuple"
	"google.golang.org/grpc"
	"google.golang.org/grpc/status"
)

// MaxUpdatesPerWrite is SpiceDB's server default for relationship updates in one
// WriteRelationships (--write-relationships-max-updates-per-call); Load writes in batches of it.
const MaxUpdatesPerWrite = 1000

// WriteInto writes f's schema and relationships into a running SpiceDB over its gRPC API, as its
// users' tools do: the schema first, then the relationships in batches of MaxUpdatesPerWrite,
// each as a TOUCH. conn must carry the server's preshared key. It returns the token of the last
// write, for checks to ask for data at least as fresh. It is setup: call it before the clock.
func WriteInto(ctx context.Context, conn grpc.ClientConnInterface, f *Fixture) (*v1.ZedToken, error) {
	written, err := v1.NewSchemaServiceClient(conn).WriteSchema(ctx, &v1.WriteSchemaRequest{Schema: f.Schema})
	if err != nil {
		return nil, fmt.Errorf("%s:%d: spicedb refuses the schema: %s", f.SchemaFile, f.SchemaLine, status.Convert(err).Message())
	}
	token := written.GetWrittenAt()
	perms := v1.NewPermissionsServiceClient(conn)
	for batch := range slices.Chunk(f.Relationships, MaxUpdatesPerWrite) {
		updates := make([]*v1.RelationshipUpdate, len(batch))
		for i, r := range batch {
			updates[i] = &v1.RelationshipUpdate{Operation: v1.RelationshipUpdate_OPERATION_TOUCH, Relationship: tuple.ToV1Relationship(r.Rel)}
		}
		resp, err := perms.WriteRelationships(ctx, &v1.WriteRelationshipsRequest{Updates: updates})
		if err != nil {
			return nil, fmt.Errorf("%s to %s: spicedb refuses the relationships: %s", batch[0].Origin, batch[len(batch)-1].Origin, status.Convert(err).Message())
		}
		token = resp.GetWrittenAt()
	}
	return token, nil
}
