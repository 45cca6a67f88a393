package controlplane

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/voxgate/voxgate/agent"
	"github.com/voxgate/voxgate/audit"
	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/telemetry"
)

// A voice session is one trace (docs/operations.md, "Traces"), rooted at
// its start's request span: the start writes that span's traceparent into
// its row (voice_sessions.trace_parent), and every later piece of the
// session, on whichever replica does it, parents its spans on it: the SDP
// exchange ("voice sdp", with the provider's call creation under it), each
// attach of the holder ("voice attach", one per replica that holds or
// adopts the call), the tool calls and GPT-Live delegations the holder
// runs, and the end ("voice end", with its cost). A later request of the
// app's (the offer, the end) is its own trace unless the app sends the
// start's context; its span is linked from the session's. Nothing of what
// was said and no user id is recorded.
var tracer = telemetry.Tracer("controlplane")

const traceparentKey = "traceparent"

// traceParent is ctx's span as a W3C traceparent, or "" when ctx has none
// (tracing off and no traceparent from the app).
func traceParent(ctx context.Context) string {
	c := propagation.MapCarrier{}
	telemetry.Propagator.Inject(ctx, c)
	return c[traceparentKey]
}

// sessionSpan is the span context of a session's stored traceparent; not
// valid for "" (a session started with no trace, or by a replica older
// than migration 0091).
func sessionSpan(tp string) trace.SpanContext {
	if tp == "" {
		return trace.SpanContext{}
	}
	ctx := telemetry.Propagator.Extract(context.Background(), propagation.MapCarrier{traceparentKey: tp})
	return trace.SpanContextFromContext(ctx)
}

// inSession is ctx carrying the session's trace (stored as tp) as its
// parent, for work no request of the session's carries: a held call's.
func inSession(ctx context.Context, tp string) context.Context {
	if sc := sessionSpan(tp); sc.IsValid() {
		return trace.ContextWithRemoteSpanContext(ctx, sc)
	}
	return ctx
}

// startSessionSpan opens a span of the session whose stored traceparent is
// tp. A caller already in the session's trace (its holder, or an app that
// sent the start's context) is its parent; a caller in another trace (a
// request of its own) is linked, and the session's start is the parent.
func startSessionSpan(ctx context.Context, tp, name string, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	opts := []trace.SpanStartOption{trace.WithAttributes(attrs...)}
	caller := trace.SpanContextFromContext(ctx)
	if sc := sessionSpan(tp); sc.IsValid() && sc.TraceID() != caller.TraceID() {
		if caller.IsValid() {
			opts = append(opts, trace.WithLinks(trace.Link{SpanContext: caller}))
		}
		ctx = trace.ContextWithRemoteSpanContext(ctx, sc)
	}
	return tracer.Start(ctx, name, opts...)
}

// endSpan closes a span with err's code as its error, if any.
func endSpan(span trace.Span, err error) {
	if err != nil && span.IsRecording() {
		code := string(apierr.CodeOf(err))
		if code == "" {
			code = string(apierr.Internal)
		}
		span.SetAttributes(attribute.String("error.type", code))
		span.SetStatus(codes.Error, code)
	}
	span.End()
}

// sessionAttrs name a session on its spans: its id and mode, never its user.
func sessionAttrs(id, mode string) []attribute.KeyValue {
	return []attribute.KeyValue{attribute.String("voxgate.voice.session_id", id), attribute.String("voxgate.voice.mode", mode)}
}

// traceStart names the session on its start's request span, whose context
// the row keeps.
func traceStart(ctx context.Context, id, mode, model, provider string) {
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		span.SetAttributes(append(sessionAttrs(id, mode), attribute.String("gen_ai.request.model", model),
			attribute.String("gen_ai.provider.name", provider))...)
	}
}

// startAttach opens the span of one attach of a held call on this
// replica: the first of its holder (the offer's replica, or an adopter
// after it) or a re-attach after a drop.
func (c *held) startAttach(ctx context.Context, again bool) (context.Context, trace.Span) {
	return tracer.Start(ctx, "voice attach", trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(
		append(sessionAttrs(c.id, c.mode), attribute.String("voxgate.voice.replica", c.s.replica),
			attribute.Bool("voxgate.voice.reattach", again))...))
}

// traceEnded records an end on its span: the reason, the time charged and
// the record's tokens and cost. ended is false for an end that found the
// session ended already (a late report).
func traceEnded(span trace.Span, reason string, sess Session, ended bool, err error) {
	if span.IsRecording() && err == nil {
		attrs := []attribute.KeyValue{attribute.String("voxgate.voice.end_reason", reason), attribute.Bool("voxgate.voice.ended", ended)}
		if sess.DurationMS != nil && sess.ChargedS != nil {
			attrs = append(attrs, attribute.Int64("voxgate.voice.duration_ms", *sess.DurationMS),
				attribute.Int64("voxgate.voice.charged_s", *sess.ChargedS))
		}
		if rec := sess.Cost; rec != nil {
			in, out := rec.TokenCount()
			attrs = append(attrs, attribute.String("gen_ai.response.model", rec.Model),
				attribute.Int64("gen_ai.usage.input_tokens", in), attribute.Int64("gen_ai.usage.output_tokens", out),
				attribute.String("voxgate.usage_source", string(rec.UsageSource)))
			if rec.CostMicros != nil {
				attrs = append(attrs, attribute.Int64("voxgate.cost_micros", *rec.CostMicros))
			}
		}
		span.SetAttributes(attrs...)
	}
	endSpan(span, err)
}

// startDelegation opens a GPT-Live delegation's span, from its start to
// its answer (or its end without one), under the holder's context: the
// backend's model calls and the tools its loop runs are spans under it.
func (c *liveCall) startDelegation(ctx context.Context, d *delegation) context.Context {
	ctx, d.span = tracer.Start(ctx, "invoke_agent delegation", trace.WithAttributes(
		append(sessionAttrs(c.id, c.mode), attribute.String("gen_ai.operation.name", "invoke_agent"),
			attribute.String("gen_ai.agent.name", "delegation"), attribute.String("gen_ai.request.model", c.s.backendModel),
			attribute.String("voxgate.delegation.id", d.id))...))
	return ctx
}

// traceDelegationRan records what a delegation's loop did: the tools it
// ran, by name, in order, and what its model calls used. The loop's
// goroutine sets it once it returns; a span ended before (the delegation
// timed out) ignores it.
func traceDelegationRan(span trace.Span, ran []string, u agent.Usage) {
	if span == nil || !span.IsRecording() {
		return
	}
	span.SetAttributes(attribute.StringSlice("voxgate.delegation.tools", ran), attribute.Int64("voxgate.delegation.model_calls", u.Calls),
		attribute.Int64("gen_ai.usage.input_tokens", u.InputTokens), attribute.Int64("gen_ai.usage.output_tokens", u.OutputTokens))
	if u.Model != "" {
		span.SetAttributes(attribute.String("gen_ai.response.model", u.Model))
	}
}

// endDelegation closes a delegation's span with how it ended: its audit
// status (success when its answer was said), or released when the holder
// let it go to another replica's.
func endDelegation(d *delegation, outcome string) {
	if d.span == nil {
		return
	}
	d.span.SetAttributes(attribute.String("voxgate.delegation.outcome", outcome))
	if outcome != string(audit.Success) {
		d.span.SetStatus(codes.Error, outcome)
	}
	d.span.End()
}

// toolInSession opens a "voice tool_call" span in the session's trace for
// a tool call whose request is in another (a direct session's app posts
// its calls), linked to that request, so the call's executor span joins
// the session. A held call's tool calls are in the session's trace
// already: ok is false and nothing is opened.
func toolInSession(ctx context.Context, tp, id, source string) (context.Context, trace.Span, bool) {
	sc := sessionSpan(tp)
	if !sc.IsValid() || sc.TraceID() == trace.SpanContextFromContext(ctx).TraceID() {
		return ctx, nil, false
	}
	ctx, span := startSessionSpan(ctx, tp, "voice tool_call", sessionAttrs(id, source)...)
	return ctx, span, true
}
