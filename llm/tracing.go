package llm

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/voxgate/voxgate/internal/telemetry"
)

// Each router attempt is a span of the GenAI semantic conventions, named
// "chat <model>" (docs/operations.md, "Traces"): the provider, the model
// asked and the one that answered, token usage, the finish reason, and
// voxgate's own outcome and the breaker's state. No message text is ever
// recorded.
var tracer = telemetry.Tracer("llm")

// spanCancelled ends the span of an attempt its caller gave up on, which
// the route's trace does not record.
const spanCancelled = "cancelled"

// startAttempt opens an attempt's span under ctx.
func startAttempt(ctx context.Context, route string, t Target, p Provider) (context.Context, trace.Span) {
	ctx, span := tracer.Start(ctx, "chat "+t.Model, trace.WithSpanKind(trace.SpanKindClient))
	if span.IsRecording() {
		kind := t.Provider
		if k, ok := p.(interface{ Kind() string }); ok {
			kind = k.Kind()
		}
		span.SetAttributes(attribute.String("gen_ai.operation.name", "chat"),
			attribute.String("gen_ai.provider.name", kind), attribute.String("gen_ai.request.model", t.Model),
			attribute.String("voxgate.route", route), attribute.String("voxgate.target", t.String()))
	}
	return ctx, span
}

// endAttempt closes an attempt's span with its outcome as the trace has it,
// the usage the provider reported (u, nil for none), the finish reason ("" for
// none) and the breaker's state after the attempt.
func endAttempt(span trace.Span, outcome string, status int, u *Usage, finish string, b *breaker) {
	if span.IsRecording() {
		state, _, _ := b.snapshot()
		attrs := []attribute.KeyValue{attribute.String("voxgate.attempt.outcome", outcome),
			attribute.String("voxgate.breaker.state", state)}
		if status != 0 {
			attrs = append(attrs, attribute.Int("http.response.status_code", status))
		}
		if u != nil {
			attrs = append(attrs, attribute.String("gen_ai.response.model", u.Model),
				attribute.Int64("gen_ai.usage.input_tokens", u.InputTokens),
				attribute.Int64("gen_ai.usage.output_tokens", u.OutputTokens))
		}
		if finish != "" {
			attrs = append(attrs, attribute.StringSlice("gen_ai.response.finish_reasons", []string{finish}))
		}
		span.SetAttributes(attrs...)
		if outcome != OutcomeSuccess {
			span.SetAttributes(attribute.String("error.type", outcome))
			span.SetStatus(codes.Error, outcome)
		}
	}
	span.End()
}

// skippedChunk notes on an attempt's span an unreadable chunk set aside,
// which carried none of the answer.
func skippedChunk(span trace.Span) {
	span.AddEvent("voxgate.chunk.skipped")
}
