package controlplane_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/internal/testkit"
	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
	"github.com/voxgate/voxgate/tools"
)

// oneTurn is a sim that hears one question and delegates it.
func oneTurn(script sim.Script, lat *sim.Latency) sim.Config {
	cfg := liveSim(sim.Live{Said: []string{"Find me a pasta recipe"}, TurnPackets: 25, UsageInterval: time.Second})
	cfg.Script, cfg.Latency = script, lat
	return cfg
}

// appended lists the session's applied appends of type typ.
func appended(st sim.LiveStats, typ string) []sim.LiveApplied {
	var out []sim.LiveApplied
	for _, a := range st.Applied {
		if a.Type == typ {
			out = append(out, a)
		}
	}
	return out
}

// A delegation the backend cannot answer within its deadline: the voice
// is told plainly (trusted instructions for that delegation), and the
// result that comes later is dropped: no commentary ever.
func TestLiveDelegationDeadline(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	lat := &sim.Latency{ModelTTFT: map[string]time.Duration{"gpt-4.1-mini": 3 * time.Second}}
	f := newFixture(t, options{backend: "gpt-4.1-mini", registry: reg, simCfg: oneTurn(liveScript(), lat),
		configFn: func(c *config.Voice) { c.Live.DelegationDeadline = time.Second }})
	p := newUser(t, "pro")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	_, phone, liveID := liveCall(t, ctx, f, p)
	if err := phone.SendAudio(ctx, 30, 20*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	var st sim.LiveStats
	testkit.Eventually(t, ctx, "the apology", func() bool {
		st, _ = f.sim.LiveSession(liveID)
		return len(appended(st, "session.instructions.append")) == 1
	})
	a := appended(st, "session.instructions.append")[0]
	if a.DelegationID == nil || len(st.Delegations) != 1 || *a.DelegationID != st.Delegations[0] || !strings.Contains(a.Content, "could not") {
		t.Fatalf("apology %+v for delegations %v", a, st.Delegations)
	}
	testkit.Eventually(t, ctx, "the late result dropped", func() bool { return counter(t, reg, "dropped") == 1 })
	if counter(t, reg, "timed_out") != 1 || counter(t, reg, "answered") != 0 {
		t.Fatalf("timed out %v, answered %v; want 1, 0", counter(t, reg, "timed_out"), counter(t, reg, "answered"))
	}
	st, _ = f.sim.LiveSession(liveID)
	if c := appended(st, "session.commentary.append"); len(c) != 0 {
		t.Fatalf("commentary after the deadline: %+v", c)
	}
}

// counter reads voxgate_voice_live_delegations_total for one outcome.
func counter(t *testing.T, reg *prometheus.Registry, outcome string) float64 {
	t.Helper()
	return metricValue(t, reg, "voxgate_voice_live_delegations_total", outcome)
}

// metricValue reads counter name's series whose outcome label is outcome;
// -1 when there is none.
func metricValue(t *testing.T, reg *prometheus.Registry, name, outcome string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "outcome" && l.GetValue() == outcome {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return -1
}

// The backend model asks for a tool that is not voice-allowed, and for
// echo twice in a minute whose window holds one: the first and last are
// answered with refusals the model reads, nothing of them runs, and the
// voice still gets an answer.
func TestLiveDelegationRefusals(t *testing.T) {
	t.Parallel()
	var runs int64
	var chatOnly atomic.Int64
	reg := prometheus.NewRegistry()
	no, yes := false, true
	script := sim.Script{Rules: []sim.Rule{
		{When: sim.When{Contains: []string{"pasta"}, ToolResults: &no}, Reply: sim.Reply{ToolCalls: []sim.ScriptCall{
			{Name: "chat_only", Arguments: map[string]any{}}, {Name: "echo", Arguments: map[string]any{"q": "a"}},
			{Name: "echo", Arguments: map[string]any{"q": "b"}}}}},
		{When: sim.When{ToolResults: &yes}, Reply: sim.Reply{Text: "I could only do part of that."}},
	}}
	f := newFixture(t, options{runs: &runs, registry: reg, backend: "gpt-4.1-mini", simCfg: oneTurn(script, simtest.ZeroLatency()),
		configFn: func(c *config.Voice) { c.ToolCallsPerMinute = 1 },
		moreTools: []*tools.Tool{{Name: "chat_only", Description: "Not for voice.", Parameters: json.RawMessage(`{"type":"object"}`),
			Run: func(context.Context, tools.Invocation) (tools.Outcome, error) {
				chatOnly.Add(1)
				return tools.Outcome{Data: "x"}, nil
			}}}})
	p := newUser(t, "pro")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	_, phone, liveID := liveCall(t, ctx, f, p)
	if err := phone.SendAudio(ctx, 30, 20*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	var st sim.LiveStats
	testkit.Eventually(t, ctx, "the answer", func() bool {
		st, _ = f.sim.LiveSession(liveID)
		return len(appended(st, "session.commentary.append")) == 1
	})
	if runs != 1 || chatOnly.Load() != 0 {
		t.Fatalf("echo ran %d times, chat_only %d; want 1, 0", runs, chatOnly.Load())
	}
	if n := metricValue(t, reg, "voxgate_voice_tool_calls_total", "refused"); n != 1 {
		t.Fatalf("%v tool calls refused; want the window's one", n)
	}
}

// systemPrompts wraps the backend and keeps the system message of every
// model call a delegation makes.
type systemPrompts struct {
	llm.Provider
	mu   sync.Mutex
	seen []string
}

func (p *systemPrompts) Stream(ctx context.Context, req llm.Request) (llm.Stream, error) {
	p.mu.Lock()
	for _, m := range req.Messages {
		if m.Role == llm.RoleSystem {
			p.seen = append(p.seen, m.Content)
		}
	}
	p.mu.Unlock()
	return p.Provider.Stream(ctx, req)
}

// The backend model's instructions are voice.live.backend_instructions,
// the session's own (voice.instructions with the profile) after them:
// nothing of the demo's domain is left in the gateway.
func TestLiveBackendInstructionsFromConfig(t *testing.T) {
	t.Parallel()
	prompts := &systemPrompts{}
	f := newFixture(t, options{backend: "gpt-4.1-mini", simCfg: oneTurn(liveScript(), simtest.ZeroLatency()),
		wrapBackend: func(p llm.Provider) llm.Provider { prompts.Provider = p; return prompts },
		configFn: func(c *config.Voice) {
			c.Instructions = "Speak like a ship's captain."
			c.Live.BackendInstructions = "You run errands for a bike shop."
		}})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	_, _, liveID := askLive(t, ctx, f)
	waitAppended(t, ctx, f, liveID, "session.commentary.append")
	prompts.mu.Lock()
	defer prompts.mu.Unlock()
	if len(prompts.seen) == 0 {
		t.Fatal("no model call")
	}
	for _, got := range prompts.seen {
		if !strings.HasPrefix(got, "You run errands for a bike shop.\n\nSpeak like a ship's captain.") || strings.Contains(got, "wellness") {
			t.Fatalf("system message %q; want the configured backend instructions, then the session's", got)
		}
	}
}
