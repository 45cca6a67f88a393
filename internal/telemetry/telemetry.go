// Package telemetry is what voxgate's packages need of OpenTelemetry
// traces (DESIGN §13, docs/operations.md "Traces"): a named tracer and
// the W3C trace context, which is read from requests and written into
// webhook and MCP calls whether or not spans are exported, so an app's
// own trace passes through. It imports the API alone: the exporters (and
// grpc with them) are package otlp's, which only the composition root
// links, so a domain package links no exporter.
package telemetry

import (
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Propagator is the W3C trace context, which voxgate reads and writes.
var Propagator = propagation.TraceContext{}

func init() { otel.SetTextMapPropagator(Propagator) }

// Tracer is the named tracer of one package ("voxgate/llm"). It follows
// the provider otlp.Setup installs, whenever that happens.
func Tracer(name string) trace.Tracer { return otel.Tracer("github.com/voxgate/voxgate/" + name) }
