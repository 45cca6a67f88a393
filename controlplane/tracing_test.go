package controlplane_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/voxgate/voxgate/internal/testkit"
	"github.com/voxgate/voxgate/sim/simtest"
)

// A GPT-Live session's delegation is a span of the session's trace, whose
// context its row keeps: under the start's span, the delegation from its
// start to its answer, with the tools it ran, and the executor's span of
// that tool under it; the exchange with the Live session's creation under
// it, and the end with its cost. The spans are recorded in memory by the
// one tracer provider this package's tests install (spanRecorder: the
// package tracers follow the first one installed in a process, so a
// second would see nothing); the other tests' spans go to it too, unread.
func TestLiveDelegationTraced(t *testing.T) {
	t.Parallel()
	rec := spanRecorder()
	f := newFixture(t, options{backend: "gpt-4.1-mini", simCfg: oneTurn(liveScript(), simtest.ZeroLatency())})
	p := newUser(t, "pro")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	start := mustStart(t, f, p, `{"mode":"live"}`)
	// The start's span, as a start in a traced request writes it.
	const traceID, startSpan = "7ace0ffee7b34da6a3ce929d0e0e4736", "20f067aa0ba902b9"
	if _, err := f.pool.Exec(ctx, `UPDATE voice_sessions SET trace_parent = $2 WHERE id = $1`,
		start.SessionID, "00-"+traceID+"-"+startSpan+"-01"); err != nil {
		t.Fatal(err)
	}
	phone := simtest.NewCaller(t)
	offer, err := phone.Offer(ctx)
	if err != nil {
		t.Fatal(err)
	}
	w := postOffer(t, f, p, start.SessionID, "application/sdp", offer)
	if w.Code != http.StatusCreated {
		t.Fatalf("offer: %d %s", w.Code, w.Body)
	}
	if err := phone.Accept(w.Body.String()); err != nil {
		t.Fatal(err)
	}
	if err := phone.WaitOpen(ctx); err != nil {
		t.Fatal(err)
	}
	sessions := f.sim.LiveSessions()
	liveID := sessions[len(sessions)-1].ID
	testkit.Eventually(t, ctx, "the gateway's sideband", func() bool { st, _ := f.sim.LiveSession(liveID); return st.Sidebands >= 1 })
	if err := phone.SendAudio(ctx, 30, 20*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	waitAppended(t, ctx, f, liveID, "session.commentary.append")
	endLive(t, ctx, f, p, start.SessionID, liveID)

	spans := inTrace(rec, traceID)
	one := func(name string) sdktrace.ReadOnlySpan { t.Helper(); return oneSpan(t, spans, name) }
	del := one("invoke_agent delegation")
	if parent(del) != startSpan || value(del, "voxgate.delegation.outcome").AsString() != "success" ||
		len(value(del, "voxgate.delegation.tools").AsStringSlice()) != 1 || value(del, "voxgate.delegation.tools").AsStringSlice()[0] != "echo" ||
		value(del, "gen_ai.usage.output_tokens").AsInt64() <= 0 {
		t.Errorf("the delegation's span: parent %s, %v; want the start's %s, success, having run echo, with its tokens", parent(del), del.Attributes(), startSpan)
	}
	if tool := one("execute_tool echo"); parent(tool) != del.SpanContext().SpanID().String() {
		t.Errorf("the tool call's span is under %s, not the delegation's", parent(tool))
	}
	sdp := one("voice sdp")
	if create := one("realtime create_live"); parent(sdp) != startSpan || parent(create) != sdp.SpanContext().SpanID().String() ||
		create.SpanKind() != trace.SpanKindClient || value(create, "voxgate.voice.call_id").AsString() != liveID {
		t.Errorf("the exchange under %s and the creation under %s (%v); want the start's, then the exchange's, naming %s",
			parent(sdp), parent(create), create.Attributes(), liveID)
	}
	if end := one("voice end"); parent(end) != startSpan || value(end, "voxgate.cost_micros").AsInt64() <= 0 {
		t.Errorf("the end's span: parent %s, %v; want the start's, with a cost", parent(end), end.Attributes())
	}
}

// A direct session's app posts its tool calls in requests of their own:
// each call is a "voice tool_call" span under the session's start, with
// the executor's span under it.
func TestDirectToolCallTraced(t *testing.T) {
	t.Parallel()
	rec := spanRecorder()
	f := newFixture(t, options{})
	p := newUser(t, "pro")
	start := mustStart(t, f, p, `{"mode":"direct"}`)
	const traceID, startSpan = "8ace0ffee7b34da6a3ce929d0e0e4736", "30f067aa0ba902b9"
	if _, err := f.pool.Exec(context.Background(), `UPDATE voice_sessions SET trace_parent = $2 WHERE id = $1`,
		start.SessionID, "00-"+traceID+"-"+startSpan+"-01"); err != nil {
		t.Fatal(err)
	}
	if w := call(t, f.svc.HandleToolCall, p, "POST", "/", []byte(`{"call_id":"call_1","name":"echo","arguments":{"q":"pasta"}}`),
		start.SessionID); w.Code != 200 {
		t.Fatalf("tool call: %d %s", w.Code, w.Body)
	}
	spans := inTrace(rec, traceID)
	tc := oneSpan(t, spans, "voice tool_call")
	if tool := oneSpan(t, spans, "execute_tool echo"); parent(tc) != startSpan || parent(tool) != tc.SpanContext().SpanID().String() {
		t.Errorf("the tool call under %s, the executor's span under %s; want the start's %s, then the tool call's", parent(tc), parent(tool), startSpan)
	}
}

var (
	recOnce  sync.Once
	recorder *tracetest.SpanRecorder
)

// spanRecorder installs the process's tracer provider, once, recording
// every span in memory.
func spanRecorder() *tracetest.SpanRecorder {
	recOnce.Do(func() {
		recorder = tracetest.NewSpanRecorder()
		otel.SetTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(recorder)))
	})
	return recorder
}

// inTrace is the ended spans of one trace, by name.
func inTrace(rec *tracetest.SpanRecorder, traceID string) map[string][]sdktrace.ReadOnlySpan {
	spans := map[string][]sdktrace.ReadOnlySpan{}
	for _, s := range rec.Ended() {
		if s.SpanContext().TraceID().String() == traceID {
			spans[s.Name()] = append(spans[s.Name()], s)
		}
	}
	return spans
}

func oneSpan(t *testing.T, spans map[string][]sdktrace.ReadOnlySpan, name string) sdktrace.ReadOnlySpan {
	t.Helper()
	if len(spans[name]) != 1 {
		t.Fatalf("%d spans %q in the session's trace, want 1", len(spans[name]), name)
	}
	return spans[name][0]
}

func parent(s sdktrace.ReadOnlySpan) string { return s.Parent().SpanID().String() }

func value(s sdktrace.ReadOnlySpan, key string) attribute.Value {
	for _, kv := range s.Attributes() {
		if string(kv.Key) == key {
			return kv.Value
		}
	}
	return attribute.Value{}
}
