package otlp

import (
	"context"
	"net"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	"google.golang.org/grpc"
)

// grpcReceiver is an OTLP/gRPC trace service: the protocol's own server
// type, which hands it each export decoded.
type grpcReceiver struct {
	coltracepb.UnimplementedTraceServiceServer
	got chan *coltracepb.ExportTraceServiceRequest
}

func (r *grpcReceiver) Export(_ context.Context, req *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	r.got <- req
	return &coltracepb.ExportTraceServiceResponse{}, nil
}

// With OTEL_EXPORTER_OTLP_PROTOCOL=grpc, Setup's provider exports over
// OTLP/gRPC: a span reaches the receiver with the service's name and
// version as its resource, and Shutdown flushes it.
func TestSetupExportsOverGRPC(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	rc := &grpcReceiver{got: make(chan *coltracepb.ExportTraceServiceRequest, 8)}
	srv := grpc.NewServer()
	coltracepb.RegisterTraceServiceServer(srv, rc)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://"+lis.Addr().String()) // http: no TLS
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
	t.Setenv("OTEL_SERVICE_NAME", "voxgate-grpc-test")

	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	tr, err := Setup(ctx, "9.9.9")
	if err != nil || !tr.On() {
		t.Fatalf("Setup: %v, on %v", err, tr.On())
	}
	_, span := tr.tp.Tracer("test").Start(ctx, "exported over grpc")
	span.End()
	if err := tr.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown (the flush): %v", err)
	}
	select {
	case req := <-rc.got:
		rs := req.ResourceSpans
		if len(rs) != 1 || len(rs[0].ScopeSpans) != 1 || len(rs[0].ScopeSpans[0].Spans) != 1 ||
			rs[0].ScopeSpans[0].Spans[0].Name != "exported over grpc" {
			t.Fatalf("export %v: want the one span", req)
		}
		res := map[string]string{}
		for _, kv := range rs[0].Resource.Attributes {
			if v, ok := kv.Value.Value.(*commonpb.AnyValue_StringValue); ok {
				res[kv.Key] = v.StringValue
			}
		}
		if res["service.name"] != "voxgate-grpc-test" || res["service.version"] != "9.9.9" {
			t.Errorf("resource %v: want the service's name and version", res)
		}
	default:
		t.Fatal("nothing reached the OTLP/gRPC receiver by the end of Shutdown")
	}
}
