package main

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/voxgate/voxgate/controlplane"
	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/internal/testkit"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// The voice half of the tracing test. It shares TestTracesOfAChatTurn's
// process and receiver: the package tracers delegate to the first
// provider installed, so a second test with its own could not see them.

// voiceTool is the webhook tool the simulated voice model calls.
const voiceTool = "find_recipe"

// hookCalls are the traceparents a webhook server received, by path.
type hookCalls struct {
	mu      sync.Mutex
	parents map[string][]string
}

func (h *hookCalls) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	if h.parents == nil {
		h.parents = map[string][]string{}
	}
	h.parents[r.URL.Path] = append(h.parents[r.URL.Path], r.Header.Get("Traceparent"))
	h.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(`{"goal":"more energy"}`))
}

func (h *hookCalls) of(path string) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.parents[path]...)
}

// tracedVoice is the config both replicas of the tracing test share: the
// webhook tools (the context tool, and a voice tool at /recipe) and the
// Realtime API of a simulator whose model calls the voice tool when it
// hears of pasta.
func tracedVoice(hookURL, realtimeURL string) func(*config.Config) {
	return func(cfg *config.Config) {
		cfg.Tools.Webhooks = []config.WebhookTool{
			{Name: "profile_hook", Description: "Reads the user's profile.", URL: hookURL + "/profile",
				SecretEnv: "PROFILE_HOOK_SECRET", Parameters: map[string]any{"type": "object"}},
			{Name: voiceTool, Description: "Finds a recipe.", URL: hookURL + "/recipe", Voice: true,
				SecretEnv: "PROFILE_HOOK_SECRET", Parameters: map[string]any{"type": "object"}},
		}
		name := "profile_hook"
		cfg.Voice.ContextTool = &name
		cfg.Secrets.OpenAIAPIKey, cfg.Secrets.OpenAIBaseURL = simtest.TestKey, realtimeURL+"/v1"
	}
}

// withHookSecret gives the webhooks their signing secret.
func withHookSecret(m *Main) {
	env := m.Getenv
	m.Getenv = func(k string) string {
		if k == "PROFILE_HOOK_SECRET" {
			return "a-secret-of-some-length"
		}
		return env(k)
	}
}

func newRealtimeSim(t *testing.T) (*sim.Server, string) {
	no, yes := false, true
	s, ts := simtest.NewServer(t, sim.Config{Latency: simtest.ZeroLatency(),
		Realtime: sim.Realtime{ReplyAudioMS: 200, GenerationMS: 50},
		Script: sim.Script{Rules: []sim.Rule{
			{Name: "call", When: sim.When{Contains: []string{"pasta"}, ToolResults: &no},
				Reply: sim.Reply{ToolCalls: []sim.ScriptCall{{Name: voiceTool, Arguments: map[string]any{"q": "pasta"}}}}},
			{Name: "speak", When: sim.When{ToolResults: &yes}, Reply: sim.Reply{Text: "I found a pasta recipe for you."}},
		}}})
	return s, ts.URL
}

// talkTurn makes the phone ask for pasta and waits for both responses:
// the model's tool call, and its answer after the gateway's output.
func talkTurn(t *testing.T, ctx context.Context, phone *simtest.Caller) {
	t.Helper()
	if err := phone.SendAudio(ctx, 75, 20*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	for done := 0; done < 2; {
		ev, err := phone.Next(ctx)
		if err != nil {
			t.Fatalf("after %d responses: %v", done, err)
		}
		if ev.Type == "response.done" {
			done++
		}
	}
}

// traceSidebandCall places a sideband call on replica a of the tracing
// test: started with the app's traceparent, offered with none, a tool
// call on a, then a's voice service closes (its calls handed over), b
// adopts the call, runs the next tool call and ends the session. The
// session is one trace: the start's request span; under it the SDP
// exchange (linked to the offer's own request) with the provider's call
// creation; each replica's attach; both tool calls, each passing its span
// to the webhook; and the end with its cost.
func traceSidebandCall(t *testing.T, rc *otlpReceiver, a, b *gateway, rt *sim.Server, hooks *hookCalls) {
	const traceID, parentID = "5ac0ffee7b34da6a3ce929d0e0e47360", "10f067aa0ba902b8"
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	user := mint(t, "u-voice-traced", "", "pro")
	post := func(base, path, ctype, body, traceparent string) (int, string) {
		req, _ := http.NewRequestWithContext(ctx, "POST", base+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+user)
		req.Header.Set("Content-Type", ctype)
		if traceparent != "" {
			req.Header.Set("Traceparent", traceparent)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(out)
	}
	status, body := post(a.m.URL(), "/v1/voice/sessions", "application/json", `{"mode":"sideband"}`, "00-"+traceID+"-"+parentID+"-01")
	var start controlplane.StartResponse
	if err := json.Unmarshal([]byte(body), &start); status != 201 || err != nil {
		t.Fatalf("start: %d %s", status, body)
	}
	phone := simtest.NewCaller(t)
	offer, err := phone.Offer(ctx)
	if err != nil {
		t.Fatal(err)
	}
	status, answer := post(a.m.URL(), start.SDPURL, "application/sdp", offer, "")
	if status != 201 {
		t.Fatalf("offer: %d %s", status, answer)
	}
	if err := phone.Accept(answer); err != nil {
		t.Fatal(err)
	}
	if err := phone.WaitOpen(ctx); err != nil {
		t.Fatal(err)
	}
	calls := rt.Calls()
	callID := calls[len(calls)-1].ID
	attached := func(n int64) {
		testkit.Eventually(t, ctx, "the holder's attach", func() bool { st, _ := rt.Call(callID); return st.Sidebands >= n })
	}
	attached(1)
	talkTurn(t, ctx, phone)

	// a's voice service closes as on SIGTERM (its tracer provider stays:
	// b's spans are exported through it), handing the call to b.
	va, vb := a.m.Voice.(*controlplane.Service), b.m.Voice.(*controlplane.Service)
	va.Close()
	attached(2)
	testkit.Eventually(t, ctx, "b holding the call", func() bool { return vb.Held() == 1 })
	talkTurn(t, ctx, phone)
	if status, body := post(b.m.URL(), "/v1/voice/sessions/"+start.SessionID+"/end", "application/json", `{}`, ""); status != 200 {
		t.Fatalf("end on b: %d %s", status, body)
	}

	var spans map[string][]*tracepb.Span
	testkit.Eventually(t, ctx, "the voice session's spans", func() bool {
		spans = rc.trace(traceID)
		return len(spans["voice end"]) == 1 && len(spans["execute_tool "+voiceTool]) == 2
	})
	root := one(t, spans, "POST /v1/voice/sessions")
	if hex.EncodeToString(root.ParentSpanId) != parentID || attr(root, "voxgate.voice.session_id") != start.SessionID ||
		attr(root, "voxgate.voice.mode") != "sideband" {
		t.Errorf("the start's span: parent %x, %v; want the app's span %s, the session named", root.ParentSpanId, root.Attributes, parentID)
	}
	childOf := func(s, parent *tracepb.Span) bool { return string(s.ParentSpanId) == string(parent.SpanId) }
	if ctxTool := one(t, spans, "execute_tool profile_hook"); !childOf(ctxTool, root) {
		t.Errorf("the context tool's span is not under the start's")
	}
	sdp := one(t, spans, "voice sdp")
	if !childOf(sdp, root) {
		t.Errorf("the SDP exchange's span is not under the start's")
	}
	if len(sdp.Links) != 1 || hex.EncodeToString(sdp.Links[0].TraceId) == traceID {
		t.Errorf("the SDP exchange's links %v: want the offer's own request, in a trace of its own", sdp.Links)
	}
	create := one(t, spans, "realtime create_call")
	if !childOf(create, sdp) || attr(create, "voxgate.voice.call_id") != callID || create.Kind != tracepb.Span_SPAN_KIND_CLIENT {
		t.Errorf("the call's creation: under the exchange %v, call %q, kind %v; want %s, client", childOf(create, sdp),
			attr(create, "voxgate.voice.call_id"), create.Kind, callID)
	}
	// Each holder's first attach (a re-attach after a drop, which a slow
	// machine may see, is one more span of the same replica's).
	var attaches []*tracepb.Span
	for _, s := range spans["voice attach"] {
		if !boolAttr(s, "voxgate.voice.reattach") {
			attaches = append(attaches, s)
		}
	}
	if len(attaches) != 2 || attr(attaches[0], "voxgate.voice.replica") == attr(attaches[1], "voxgate.voice.replica") {
		t.Fatalf("first attaches %d of %d attach spans: want one by the holder and one by its adopter, on two replicas",
			len(attaches), len(spans["voice attach"]))
	}
	for i, s := range append(attaches, spans["execute_tool "+voiceTool]...) {
		if !childOf(s, root) {
			t.Errorf("%s (%d) is not under the start's span", s.Name, i)
		}
	}
	hooked := hooks.of("/recipe")
	for i, tool := range spans["execute_tool "+voiceTool] {
		want := "00-" + traceID + "-" + hex.EncodeToString(tool.SpanId) + "-01"
		if !strings.Contains(strings.Join(hooked, " "), want) {
			t.Errorf("tool call %d: the webhook's traceparents %v, want one of %s", i, hooked, want)
		}
	}
	end := one(t, spans, "voice end")
	if !childOf(end, root) || attr(end, "voxgate.voice.end_reason") != "user_hangup" || intAttr(end, "voxgate.cost_micros") <= 0 ||
		intAttr(end, "gen_ai.usage.output_tokens") <= 0 {
		t.Errorf("the end's span: under the start %v, %v; want user_hangup with its tokens and a cost", childOf(end, root), end.Attributes)
	}
	for name, ss := range spans {
		for _, s := range ss {
			for _, kv := range s.Attributes {
				if v := kv.Value.String(); strings.Contains(v, "pasta") || strings.Contains(v, "u-voice-traced") {
					t.Errorf("span %q carries what was said or the user's id in %s", name, kv.Key)
				}
			}
		}
	}
}

// one is the one span of that name, or the test stops.
func one(t *testing.T, spans map[string][]*tracepb.Span, name string) *tracepb.Span {
	t.Helper()
	if n := len(spans[name]); n != 1 {
		t.Fatalf("%d spans %q, want 1", n, name)
	}
	return spans[name][0]
}

func boolAttr(s *tracepb.Span, key string) bool {
	for _, kv := range s.Attributes {
		if v, ok := kv.Value.Value.(*commonpb.AnyValue_BoolValue); kv.Key == key && ok {
			return v.BoolValue
		}
	}
	return false
}

func intAttr(s *tracepb.Span, key string) int64 {
	for _, kv := range s.Attributes {
		if v, ok := kv.Value.Value.(*commonpb.AnyValue_IntValue); kv.Key == key && ok {
			return v.IntValue
		}
	}
	return 0
}
