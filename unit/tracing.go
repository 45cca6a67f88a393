package unit

import (
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/voxgate/voxgate/internal/telemetry"
)

// A unit's end is a span of its request's trace ("settle"): its records,
// their cost and the audit row's status, written in one transaction or
// handed to the spool. The router's attempts, the admission and the tool
// calls make their own spans under the same request (docs/operations.md,
// "Traces").
var tracer = telemetry.Tracer("unit")

func traceEnd(span trace.Span, e End, out Ended, err error) {
	if span.IsRecording() {
		var cost int64
		for _, r := range out.Records {
			if r.CostMicros != nil {
				cost += *r.CostMicros
			}
		}
		attrs := []attribute.KeyValue{attribute.Int("voxgate.records", len(e.Records)),
			attribute.Int64("voxgate.cost_micros", cost)}
		if e.Audit != nil {
			attrs = append(attrs, attribute.String("voxgate.audit.status", string(e.Audit.Status)),
				attribute.StringSlice("voxgate.safety.rules", e.Audit.RuleIDs))
		}
		span.SetAttributes(attrs...)
		if err != nil {
			span.SetStatus(codes.Error, "end not written")
		}
	}
	span.End()
}
