// Package otlp exports voxgate's traces over OTLP (docs/operations.md,
// "Traces") when the standard OTEL_* variables name an endpoint, read by
// the official SDK as it reads them everywhere; with none, no provider is
// installed and every span is the API's no-op, so a request pays a
// context value and no more. Only the composition root imports it: the
// exporters bring grpc.
package otlp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// Enabled reports whether getenv asks for traces: an OTLP endpoint is
// named and neither OTEL_SDK_DISABLED nor OTEL_TRACES_EXPORTER=none turns
// them off.
func Enabled(getenv func(string) string) bool {
	if strings.EqualFold(getenv("OTEL_SDK_DISABLED"), "true") || getenv("OTEL_TRACES_EXPORTER") == "none" {
		return false
	}
	return getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != ""
}

// Tracing is the installed provider; its zero value (traces off) does
// nothing.
type Tracing struct{ tp *sdktrace.TracerProvider }

// On reports whether spans are exported.
func (t *Tracing) On() bool { return t != nil && t.tp != nil }

// Shutdown exports what is queued and stops the exporter, within ctx.
func (t *Tracing) Shutdown(ctx context.Context) error {
	if !t.On() {
		return nil
	}
	return t.tp.Shutdown(ctx)
}

// Setup installs a tracer provider exporting over OTLP when the process's
// environment asks for one (Enabled). The exporter, its endpoint, headers,
// timeout and TLS, the sampler (OTEL_TRACES_SAMPLER, parent-based
// always-on by default) and the batch processor's limits are the SDK's own
// reading of the OTEL_* variables; the protocol is
// OTEL_EXPORTER_OTLP_TRACES_PROTOCOL or OTEL_EXPORTER_OTLP_PROTOCOL,
// http/protobuf by default, or grpc.
func Setup(ctx context.Context, version string) (*Tracing, error) {
	if !Enabled(os.Getenv) {
		return &Tracing{}, nil
	}
	protocol := os.Getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
	if protocol == "" {
		protocol = os.Getenv("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	var exp sdktrace.SpanExporter
	var err error
	switch protocol {
	case "", "http/protobuf":
		exp, err = otlptracehttp.New(ctx)
	case "grpc":
		exp, err = otlptracegrpc.New(ctx)
	default:
		return nil, fmt.Errorf("telemetry: OTLP protocol %q: use http/protobuf or grpc", protocol)
	}
	if err != nil {
		return nil, fmt.Errorf("telemetry: OTLP exporter: %w", err)
	}
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(
		attribute.String("service.name", serviceName()), attribute.String("service.version", version)))
	if err != nil && !errors.Is(err, resource.ErrPartialResource) {
		return nil, fmt.Errorf("telemetry: resource: %w", err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	otel.SetTracerProvider(tp)
	return &Tracing{tp: tp}, nil
}

// serviceName is OTEL_SERVICE_NAME, else "voxgate".
func serviceName() string {
	if n := os.Getenv("OTEL_SERVICE_NAME"); n != "" {
		return n
	}
	return "voxgate"
}
