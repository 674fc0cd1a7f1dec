// A toolgate.v1.Validator server on grpc-go, for the validator client's
// interoperability tests: another HTTP/2 and HPACK implementation than
// node:http2's nghttp2. It is written without generated code: messages are
// read and written with protowire by the field numbers of
// proto/toolgate/v1/validator.proto. What it answers depends on the
// request's `validator` field, as test/helpers/validator-server.ts does
// with its payload markers, and as the grpcio peer beside it does.
//
// Usage: validator [--max-streams N]. It prints its port and serves until
// stdin closes.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
)

// raw passes messages through as bytes.
type raw struct{}

func (raw) Marshal(v any) ([]byte, error) { return *(v.(*[]byte)), nil }
func (raw) Unmarshal(data []byte, v any) error {
	*(v.(*[]byte)) = append([]byte(nil), data...)
	return nil
}
func (raw) Name() string { return "proto" }

// fields reads the string fields of a ValidateRequest by number.
func fields(msg []byte) (map[protowire.Number]string, error) {
	out := map[protowire.Number]string{}
	for len(msg) > 0 {
		num, typ, n := protowire.ConsumeTag(msg)
		if n < 0 {
			return nil, protowire.ParseError(n)
		}
		msg = msg[n:]
		if typ == protowire.BytesType {
			v, m := protowire.ConsumeBytes(msg)
			if m < 0 {
				return nil, protowire.ParseError(m)
			}
			out[num] = string(v)
			msg = msg[m:]
			continue
		}
		m := protowire.ConsumeFieldValue(num, typ, msg)
		if m < 0 {
			return nil, protowire.ParseError(m)
		}
		msg = msg[m:]
	}
	return out, nil
}

// response encodes a ValidateResponse: valid (1), severity (2), code (4).
func response(valid bool, severity uint64, code string) *[]byte {
	var b []byte
	if valid {
		b = protowire.AppendTag(b, 1, protowire.VarintType)
		b = protowire.AppendVarint(b, 1)
	}
	if severity != 0 {
		b = protowire.AppendTag(b, 2, protowire.VarintType)
		b = protowire.AppendVarint(b, severity)
	}
	if code != "" {
		b = protowire.AppendTag(b, 4, protowire.BytesType)
		b = protowire.AppendString(b, code)
	}
	return &b
}

func validate(_ any, _ context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
	var in []byte
	if err := dec(&in); err != nil {
		return nil, err
	}
	f, err := fields(in)
	if err != nil {
		return nil, status.Error(codes.InvalidArgument, "not a ValidateRequest")
	}
	switch f[8] {
	case "valid":
		return response(true, 0, ""), nil
	case "block":
		return response(false, 3, "secret_found"), nil
	case "size":
		// Says how many payload bytes arrived, as an info-level code.
		return response(false, 1, fmt.Sprintf("size_%d", len(f[3]))), nil
	case "later":
		time.Sleep(20 * time.Millisecond)
		return response(true, 0, ""), nil
	case "denied":
		return nil, status.Error(codes.PermissionDenied, "denied")
	case "deadline":
		// As a validator that ran out of time answers; toolgate's own deadline is tested elsewhere.
		return nil, status.Error(codes.DeadlineExceeded, "too late")
	}
	return nil, status.Error(codes.Unimplemented, "no such case")
}

func main() {
	maxStreams := flag.Uint("max-streams", 0, "SETTINGS_MAX_CONCURRENT_STREAMS (0: grpc-go's default)")
	flag.Parse()
	opts := []grpc.ServerOption{grpc.ForceServerCodec(raw{})}
	if *maxStreams > 0 {
		opts = append(opts, grpc.MaxConcurrentStreams(uint32(*maxStreams)))
	}
	server := grpc.NewServer(opts...)
	server.RegisterService(&grpc.ServiceDesc{
		ServiceName: "toolgate.v1.Validator",
		HandlerType: (*any)(nil),
		Methods:     []grpc.MethodDesc{{MethodName: "Validate", Handler: validate}},
	}, struct{}{})
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(listener.Addr().(*net.TCPAddr).Port)
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		server.Stop()
	}()
	_ = server.Serve(listener)
}
