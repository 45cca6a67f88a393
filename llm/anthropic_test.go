package llm_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/llm/anthropic"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

func newAnthropic(t *testing.T, url string, p anthropic.Params, rt http.RoundTripper) *anthropic.Anthropic {
	t.Helper()
	p.Name, p.BaseURL = "claude", url
	if p.APIKey == "" {
		p.APIKey = simtest.TestKey
	}
	if rt != nil {
		p.HTTPClient = &http.Client{Transport: rt}
	}
	a, err := anthropic.New(p)
	if err != nil {
		t.Fatalf("NewAnthropic: %v", err)
	}
	return a
}

func anthErr(t *testing.T, err error) *llm.Error {
	t.Helper()
	var e *llm.Error
	if !errors.As(err, &e) || e.Provider != "claude" {
		t.Fatalf("got %v (%T), want an *llm.Error from claude", err, err)
	}
	return e
}

func weatherScript() sim.Script {
	yes, no := true, false
	return sim.Script{Rules: []sim.Rule{
		{When: sim.When{Contains: []string{"weather"}, ToolResults: &no},
			Reply: sim.Reply{ToolCalls: []sim.ScriptCall{{Name: "get_weather", Arguments: map[string]any{"city": "Paris"}}}}},
		{When: sim.When{ToolResults: &yes}, Reply: sim.Reply{Text: "Sunny, per {{tool_names}}."}},
	}}
}

var weatherTool = llm.ToolSpec{Name: "get_weather", Description: "Weather in a city.",
	Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false}`)}

func tok(s string) int64 { return int64((len(s) + 3) / 4) }

func TestAnthropicToolTurn(t *testing.T) {
	_, url := newRootSim(t, sim.Config{Script: weatherScript()})
	rec := &recorder{}
	a := newAnthropic(t, url, anthropic.Params{}, rec)
	if a.Name() != "claude" {
		t.Fatalf("name %q", a.Name())
	}
	msgs := []llm.Message{{Role: llm.RoleSystem, Content: "Be brief."}, {Role: llm.RoleUser, Content: "weather in Paris?"}}
	req := llm.Request{Model: "claude-haiku-5-5", Messages: msgs, Tools: []llm.ToolSpec{weatherTool}, SafetyIdentifier: "salted-hash"}
	s, err := a.Stream(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	r := drain(t, s)
	if r.err != nil || r.done == nil || r.done.FinishReason != llm.FinishToolCalls || len(r.calls) != 1 {
		t.Fatalf("result %+v", r)
	}
	call := r.calls[0]
	if !strings.HasPrefix(call.ID, "call_") || len(call.ID) > 40 || call.Name != "get_weather" || call.Arguments != `{"city":"Paris"}` {
		t.Fatalf("call %+v", call)
	}
	first := r.callDeltas[0].ToolCall
	var args string
	for _, d := range r.callDeltas {
		args += d.ToolCall.Arguments
	}
	if first.ID != call.ID || first.Name != call.Name || args != call.Arguments || r.callDeltas[len(r.callDeltas)-1].ToolCall.ID != "" {
		t.Fatalf("deltas %+v", r.callDeltas)
	}
	u := r.done.Usage
	// The sim counts tools (name, description, schema) and then messages;
	// the schema's members move, its length does not.
	if want := tok("get_weather" + "Weather in a city." + string(weatherTool.Parameters) + "Be brief." + "weather in Paris?"); u.InputTokens != want {
		t.Errorf("input tokens %d, want %d", u.InputTokens, want)
	}
	if u.OutputTokens != tok("get_weather"+`{"city":"Paris"}`) || u.Model != "claude-haiku-5-5" {
		t.Errorf("usage %+v", u)
	}
	var sent map[string]json.RawMessage
	if err := json.Unmarshal(rec.last(t), &sent); err != nil {
		t.Fatal(err)
	}
	if _, ok := sent["metadata"]; ok || string(sent["max_tokens"]) != "4096" || !strings.Contains(string(sent["system"]), "Be brief.") {
		t.Errorf("request %s", rec.last(t))
	}
	if strings.Contains(string(rec.last(t)), "salted-hash") {
		t.Error("the safety identifier went to Anthropic")
	}

	// The result goes back under the gateway's id, and the loop ends.
	req.Messages = append(msgs, llm.Message{Role: llm.RoleAssistant, ToolCalls: r.calls},
		llm.Message{Role: llm.RoleTool, ToolCallID: call.ID, Content: `{"sky":"clear"}`})
	req.MaxOutputTokens = 300
	s, err = a.Stream(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	r = drain(t, s)
	if r.err != nil || r.text != "Sunny, per get_weather." || r.done.FinishReason != llm.FinishStop {
		t.Fatalf("second turn %+v", r)
	}
	body := string(rec.last(t))
	if !strings.Contains(body, `"tool_use_id":"`+call.ID+`"`) || !strings.Contains(body, `"max_tokens":300`) {
		t.Errorf("second request %s", body)
	}
}

// A history made by another provider (OpenAI calls two tools at once, with
// gateway ids; a system message mid-conversation) is taken as is: the
// results merge into one user message, as the API requires.
func TestAnthropicForeignHistory(t *testing.T) {
	_, url := newRootSim(t, sim.Config{Script: weatherScript()})
	rec := &recorder{}
	a := newAnthropic(t, url, anthropic.Params{}, rec)
	id1, id2 := llm.NewCallID(), llm.NewCallID()
	req := llm.Request{Model: "claude-sonnet-5-5", Tools: []llm.ToolSpec{weatherTool}, Messages: []llm.Message{
		{Role: llm.RoleUser, Content: "weather in Paris and Oslo?"},
		{Role: llm.RoleAssistant, Content: "Checking both.", ToolCalls: []llm.ToolCall{
			{ID: id1, Name: "get_weather", Arguments: `{"city":"Paris"}`},
			{ID: id2, Name: "get_weather", Arguments: `{"city":"Os`}}}, // cut mid-call
		{Role: llm.RoleTool, ToolCallID: id1, Content: "sunny"},
		{Role: llm.RoleSystem, Content: "Mind the user's plans."},
		{Role: llm.RoleTool, ToolCallID: id2, Content: ""},
	}}
	s, err := a.Stream(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if r := drain(t, s); r.err != nil || r.text != "Sunny, per get_weather." {
		t.Fatalf("result %+v", r)
	}
	var sent struct {
		System   []struct{ Text string }
		Messages []struct {
			Role    string
			Content []map[string]any
		}
	}
	if err := json.Unmarshal(rec.last(t), &sent); err != nil {
		t.Fatal(err)
	}
	if len(sent.Messages) != 3 || sent.Messages[2].Role != "user" || len(sent.Messages[2].Content) != 2 ||
		len(sent.System) != 1 || sent.System[0].Text != "Mind the user's plans." {
		t.Fatalf("request %s", rec.last(t))
	}
}

func TestAnthropicCacheUsage(t *testing.T) {
	_, url := newRootSim(t, sim.Config{Script: sim.Script{Text: "ok"}})
	a := newAnthropic(t, url, anthropic.Params{}, nil)
	long := strings.Repeat("abcd", 1100) // 1,100 tokens
	msgs := []llm.Message{{Role: llm.RoleUser, Content: long}}
	r := drain(t, mustStream(t, a, llm.Request{Model: "claude-haiku-5-5", Messages: msgs}))
	if u := r.done.Usage; u.InputTokens != 1100 || u.CacheWriteInputTokens != 1024 || u.CachedInputTokens != 0 || u.OutputTokens != 1 {
		t.Fatalf("first usage %+v", u)
	}
	msgs = append(msgs, llm.Message{Role: llm.RoleAssistant, Content: "ok"}, llm.Message{Role: llm.RoleUser, Content: long})
	r = drain(t, mustStream(t, a, llm.Request{Model: "claude-haiku-5-5", Messages: msgs}))
	u := r.done.Usage
	if u.InputTokens != 2201 || u.CachedInputTokens != 1024 || u.CacheWriteInputTokens != 2176-1024 {
		t.Fatalf("second usage %+v: want 2201 in, 1024 read, 1152 written", u)
	}
	off := newAnthropic(t, url, anthropic.Params{NoPromptCache: true}, nil)
	r = drain(t, mustStream(t, off, llm.Request{Model: "claude-haiku-5-5", Messages: msgs}))
	if u := r.done.Usage; u.InputTokens != 2201 || u.CachedInputTokens != 0 || u.CacheWriteInputTokens != 0 {
		t.Fatalf("uncached usage %+v", u)
	}
}

func mustStream(t *testing.T, p llm.Provider, req llm.Request) llm.Stream {
	t.Helper()
	s, err := p.Stream(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestAnthropicMaxTokens(t *testing.T) {
	_, url := newRootSim(t, sim.Config{Script: sim.Script{Rules: []sim.Rule{{Reply: sim.Reply{TextTokens: 50}}}}})
	rec := &recorder{}
	a := newAnthropic(t, url, anthropic.Params{MaxTokens: 10}, rec)
	r := drain(t, mustStream(t, a, userRequest("claude-haiku-5-5", "hi")))
	if r.err != nil || r.done.FinishReason != llm.FinishLength || r.done.Usage.OutputTokens != 10 {
		t.Fatalf("result %+v", r)
	}
	if !strings.Contains(string(rec.last(t)), `"max_tokens":10`) {
		t.Errorf("request %s", rec.last(t))
	}
}

// A tool loop that changes provider between iterations: OpenAI calls the
// tool, Anthropic continues with its result, and neither refuses the
// history.
func TestAnthropicContinuesOpenAILoop(t *testing.T) {
	_, root := newRootSim(t, sim.Config{Script: weatherScript()})
	o := newOpenAI(t, root+"/v1", 0, nil)
	a := newAnthropic(t, root, anthropic.Params{}, nil)
	msgs := []llm.Message{{Role: llm.RoleUser, Content: "weather in Paris?"}}
	req := llm.Request{Model: "gpt-4o", Messages: msgs, Tools: []llm.ToolSpec{weatherTool}}
	st, err := o.Stream(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	var calls []llm.ToolCall
	for {
		ev, err := st.Next(t.Context())
		if err != nil {
			t.Fatalf("openai: %v", err)
		}
		if ev.Kind == llm.EventToolCall {
			calls = append(calls, *ev.ToolCall)
		}
		if ev.Kind == llm.EventDone {
			break
		}
	}
	_ = st.Close()
	if len(calls) != 1 {
		t.Fatalf("openai calls %+v", calls)
	}
	req.Model = "claude-haiku-5-5"
	req.Messages = append(msgs, llm.Message{Role: llm.RoleAssistant, ToolCalls: calls},
		llm.Message{Role: llm.RoleTool, ToolCallID: calls[0].ID, Content: "sunny"})
	r := drain(t, mustStream(t, a, req))
	if r.err != nil || r.text != "Sunny, per get_weather." || r.done.FinishReason != llm.FinishStop {
		t.Fatalf("anthropic %+v", r)
	}
}

// Sonnet 5.5 refuses thinking {"type": "disabled"} (a 400 the simulator
// serves as the API does): whatever effort a request names, even "none",
// the adapter sends no thinking setting, and the call is answered.
func TestAnthropicNeverDisablesThinking(t *testing.T) {
	_, url := newRootSim(t, sim.Config{Script: sim.Script{Text: "Hello."}})
	rec := &recorder{}
	a := newAnthropic(t, url, anthropic.Params{}, rec)
	for _, effort := range []string{"", "none", "low", "high"} {
		req := userRequest("claude-sonnet-5-5", "hello")
		req.ReasoningEffort = effort
		st, err := a.Stream(t.Context(), req)
		if err != nil {
			t.Fatalf("effort %q: %v", effort, err)
		}
		if r := drain(t, st); r.err != nil || r.text != "Hello." {
			t.Fatalf("effort %q: %q, %v", effort, r.text, r.err)
		}
		var sent map[string]any
		if err := json.Unmarshal(rec.last(t), &sent); err != nil {
			t.Fatal(err)
		}
		if th, ok := sent["thinking"]; ok {
			t.Errorf("effort %q: sent thinking %v", effort, th)
		}
	}
}
