package extauthz

import (
	"errors"
	"strconv"

	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/encoding/protowire"
)

// Raw is a message already in protobuf's wire form: a CheckRequest marshalled before any clock
// runs, or a CheckResponse as it arrived. With RawCodec, sending and receiving one costs no
// protobuf encoding on the measured path.
type Raw struct{ B []byte }

// RawCodec passes Raw messages through as they are. It is named "proto", so the call's content
// type is application/grpc+proto and the server decodes it as any protobuf message.
type RawCodec struct{}

var _ encoding.CodecV2 = RawCodec{}

func (RawCodec) Name() string { return "proto" }

func (RawCodec) Marshal(v any) (mem.BufferSlice, error) {
	m, ok := v.(*Raw)
	if !ok {
		return nil, errors.New("extauthz.RawCodec sends *extauthz.Raw only")
	}
	// A SliceBuffer is never returned to a pool, so the shared request is never written to.
	return mem.BufferSlice{mem.SliceBuffer(m.B)}, nil
}

func (RawCodec) Unmarshal(data mem.BufferSlice, v any) error {
	m, ok := v.(*Raw)
	if !ok {
		return errors.New("extauthz.RawCodec receives *extauthz.Raw only")
	}
	m.B = m.B[:0]
	for _, b := range data {
		m.B = append(m.B, b.ReadOnlyData()...)
	}
	return nil
}

// ResponseCode reads the status code of a CheckResponse in wire form (field 1, a
// google.rpc.Status, whose field 1 is the code) without decoding the rest. A response without a
// status is OK, protobuf's zero value.
func ResponseCode(b []byte) (int32, error) {
	var code int32
	err := eachField(b, func(num protowire.Number, typ protowire.Type, v []byte) (int, error) {
		if num != 1 || typ != protowire.BytesType {
			return 0, nil
		}
		st, n := protowire.ConsumeBytes(v)
		if n < 0 {
			return 0, protowire.ParseError(n)
		}
		return n, eachField(st, func(num protowire.Number, typ protowire.Type, v []byte) (int, error) {
			if num != 1 || typ != protowire.VarintType {
				return 0, nil
			}
			c, n := protowire.ConsumeVarint(v)
			if n < 0 {
				return 0, protowire.ParseError(n)
			}
			code = int32(c)
			return n, nil
		})
	})
	return code, err
}

// eachField walks a message in wire form. visit sees each field's number, type and the bytes
// from its value on; it returns how many it consumed, or 0 to have the field skipped.
func eachField(b []byte, visit func(num protowire.Number, typ protowire.Type, v []byte) (int, error)) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		n, err := visit(num, typ, b)
		if err != nil {
			return err
		}
		if n == 0 {
			if n = protowire.ConsumeFieldValue(num, typ, b); n < 0 {
				return protowire.ParseError(n)
			}
		}
		b = b[n:]
	}
	return nil
}

// Timers reads the server's timers from a response's trailer; 0 for a timer it did not send.
func Timers(trailer metadata.MD) (evalNS, handlerNS int64) {
	return timer(trailer, EvalNSKey), timer(trailer, HandlerNSKey)
}

func timer(md metadata.MD, key string) int64 {
	v := md.Get(key)
	if len(v) == 0 {
		return 0
	}
	n, err := strconv.ParseInt(v[0], 10, 64)
	if err != nil || n < 0 {
		return 0
	}
	return n
}
