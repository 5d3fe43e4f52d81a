package openfga

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	openfgav1 "github.com/openfga/api/proto/openfga/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// GRPCAPI is OpenFGA's API over a gRPC connection to a server elsewhere.
func GRPCAPI(conn grpc.ClientConnInterface) API {
	return grpcAPI{openfgav1.NewOpenFGAServiceClient(conn)}
}

type grpcAPI struct {
	c openfgav1.OpenFGAServiceClient
}

func (a grpcAPI) CreateStore(ctx context.Context, r *openfgav1.CreateStoreRequest) (*openfgav1.CreateStoreResponse, error) {
	return a.c.CreateStore(ctx, r)
}

func (a grpcAPI) WriteAuthorizationModel(ctx context.Context, r *openfgav1.WriteAuthorizationModelRequest) (*openfgav1.WriteAuthorizationModelResponse, error) {
	return a.c.WriteAuthorizationModel(ctx, r)
}

func (a grpcAPI) Write(ctx context.Context, r *openfgav1.WriteRequest) (*openfgav1.WriteResponse, error) {
	return a.c.Write(ctx, r)
}

func (a grpcAPI) DeleteStore(ctx context.Context, r *openfgav1.DeleteStoreRequest) (*openfgav1.DeleteStoreResponse, error) {
	return a.c.DeleteStore(ctx, r)
}

// HTTPAPI is OpenFGA's HTTP API at base (http://host:port), as its gateway serves the same
// messages in JSON.
func HTTPAPI(base string, client *http.Client) API {
	return httpAPI{base: strings.TrimRight(base, "/"), client: client}
}

type httpAPI struct {
	base   string
	client *http.Client
}

func (a httpAPI) CreateStore(ctx context.Context, r *openfgav1.CreateStoreRequest) (*openfgav1.CreateStoreResponse, error) {
	out := &openfgav1.CreateStoreResponse{}
	return out, a.post(ctx, "/stores", r, out)
}

func (a httpAPI) WriteAuthorizationModel(ctx context.Context, r *openfgav1.WriteAuthorizationModelRequest) (*openfgav1.WriteAuthorizationModelResponse, error) {
	out := &openfgav1.WriteAuthorizationModelResponse{}
	return out, a.post(ctx, "/stores/"+r.GetStoreId()+"/authorization-models", r, out)
}

func (a httpAPI) Write(ctx context.Context, r *openfgav1.WriteRequest) (*openfgav1.WriteResponse, error) {
	out := &openfgav1.WriteResponse{}
	return out, a.post(ctx, "/stores/"+r.GetStoreId()+"/write", r, out)
}

func (a httpAPI) DeleteStore(ctx context.Context, r *openfgav1.DeleteStoreRequest) (*openfgav1.DeleteStoreResponse, error) {
	return &openfgav1.DeleteStoreResponse{}, a.send(ctx, http.MethodDelete, "/stores/"+r.GetStoreId(), nil, nil)
}

func (a httpAPI) post(ctx context.Context, path string, in, out proto.Message) error {
	return a.send(ctx, http.MethodPost, path, in, out)
}

// send sends in (if any) as JSON and reads a 2xx answer into out (if any); any other answer is
// an error carrying OpenFGA's own message.
func (a httpAPI) send(ctx context.Context, method, path string, in, out proto.Message) error {
	var body []byte
	if in != nil {
		var err error
		if body, err = HTTPBody(in); err != nil {
			return err
		}
	}
	req, err := http.NewRequestWithContext(ctx, method, a.base+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := a.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		// OpenFGA's error answers are {"code": ..., "message": ...}.
		var msg struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(data, &msg) == nil && msg.Message != "" {
			return fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, msg.Message)
		}
		return fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, bytes.TrimSpace(data))
	}
	if out == nil {
		return nil
	}
	return protojson.UnmarshalOptions{DiscardUnknown: true}.Unmarshal(data, out)
}

// HTTPBody is a request as OpenFGA's HTTP API takes it: its JSON, field names as the API's
// documentation writes them, the store id left to the path.
func HTTPBody(m proto.Message) ([]byte, error) {
	if r, ok := m.(*openfgav1.CheckRequest); ok {
		r = proto.Clone(r).(*openfgav1.CheckRequest)
		r.StoreId = ""
		m = r
	}
	return protojson.MarshalOptions{UseProtoNames: true}.Marshal(m)
}
