package quota

import (
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/voxgate/voxgate/internal/telemetry"
)

// An admission is a span of the request's trace ("quota admit"): its
// plan and verdict, with the time spent waiting for its batch inside it.
var tracer = telemetry.Tracer("quota")

// traceAdmission records an admission's verdict on its span.
func traceAdmission(span trace.Span, c *admitCall, ok bool) {
	if !span.IsRecording() {
		return
	}
	verdict := "admitted"
	switch {
	case !ok || c.err != nil:
		verdict = "error"
		span.SetStatus(codes.Error, verdict)
	case len(c.reasons) > 0 || c.ticketID == 0:
		verdict = "denied"
	}
	span.SetAttributes(attribute.String("voxgate.quota.verdict", verdict), attribute.String("voxgate.plan", c.plan))
}
