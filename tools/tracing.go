package tools

import (
	"context"
	"net/http"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/telemetry"
)

// Each tool call is a span of the GenAI semantic conventions,
// "execute_tool <name>", with the call's id and its outcome; never its
// arguments or output. Webhook and MCP calls carry the trace on in a W3C
// traceparent header, so the app's tool server joins the trace.
var tracer = telemetry.Tracer("tools")

func startTool(ctx context.Context, name, callID string) (context.Context, trace.Span) {
	ctx, span := tracer.Start(ctx, "execute_tool "+name, trace.WithSpanKind(trace.SpanKindInternal))
	if span.IsRecording() {
		span.SetAttributes(attribute.String("gen_ai.operation.name", "execute_tool"),
			attribute.String("gen_ai.tool.name", name), attribute.String("gen_ai.tool.call.id", callID))
	}
	return ctx, span
}

func endTool(span trace.Span, res Result, err error) {
	if span.IsRecording() {
		switch {
		case err != nil:
			code := string(apierr.From(err).Code)
			span.SetAttributes(attribute.String("error.type", code))
			span.SetStatus(codes.Error, code)
		case res.Error != nil:
			span.SetAttributes(attribute.String("error.type", "tool_error"))
			span.SetStatus(codes.Error, "tool_error")
		}
	}
	span.End()
}

// inject writes ctx's trace into an outgoing request's headers.
func inject(ctx context.Context, h http.Header) {
	telemetry.Propagator.Inject(ctx, propagation.HeaderCarrier(h))
}

// traceTransport writes the trace of each request's context into it, for
// the MCP client, whose requests voxgate does not build itself.
type traceTransport struct{ base http.RoundTripper }

func (t traceTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	base := t.base
	if base == nil {
		base = http.DefaultTransport
	}
	if !trace.SpanContextFromContext(r.Context()).IsValid() {
		return base.RoundTrip(r)
	}
	r = r.Clone(r.Context())
	inject(r.Context(), r.Header)
	return base.RoundTrip(r)
}
