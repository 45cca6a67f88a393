package llm_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/llm/openai"
	"github.com/voxgate/voxgate/sim"
)

const answer = "Pasta al limone: boil the pasta, toss it with lemon, butter and parmesan. Buon appetito!"

func TestOpenAIStreamsText(t *testing.T) {
	t.Parallel()
	s, url := newSim(t, sim.Config{Script: sim.Script{Text: answer}})
	o := newOpenAI(t, url, 0, nil)
	if o.Name() != "openai" {
		t.Errorf("Name: got %q, want openai", o.Name())
	}
	st, err := o.Stream(t.Context(), userRequest("gpt-4o-mini", "what's for dinner?"))
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	r := drain(t, st)
	if r.err != nil {
		t.Fatalf("stream: %v", r.err)
	}
	if r.text != answer {
		t.Errorf("text: got %q, want %q", r.text, answer)
	}
	if r.deltas < 10 {
		t.Errorf("deltas: got %d, want the answer in many pieces", r.deltas)
	}
	if len(r.calls) != 0 {
		t.Errorf("tool calls: got %+v, want none", r.calls)
	}
	d := r.done
	if d.FinishReason != llm.FinishStop {
		t.Errorf("finish: got %q, want stop", d.FinishReason)
	}
	u := d.Usage
	if u.Model != "gpt-4o-mini-2024-07-18" {
		t.Errorf("usage model: got %q, want the dated snapshot gpt-4o-mini-2024-07-18", u.Model)
	}
	// The simulator counts 4 bytes a token.
	if want := int64((len(answer) + 3) / 4); u.OutputTokens != want {
		t.Errorf("output tokens: got %d, want %d", u.OutputTokens, want)
	}
	if want := int64((len("what's for dinner?") + 3) / 4); u.InputTokens != want || u.CachedInputTokens != 0 {
		t.Errorf("input tokens: got %d (%d cached), want %d (0 cached)", u.InputTokens, u.CachedInputTokens, want)
	}
	if err := st.Close(); err != nil {
		t.Errorf("Close after the end: %v", err)
	}
	// A stream read to its end is not a cancelled one.
	if got := s.Stats().Endpoints[sim.EndpointChatCompletions]; got.Requests != 1 || got.CancelledByClient != 0 {
		t.Errorf("sim stats: got %d requests, %d cancelled; want 1 and 0", got.Requests, got.CancelledByClient)
	}
}

var recipeTool = llm.ToolSpec{
	Name:        "find_recipes",
	Description: "Find recipes by ingredient.",
	Parameters:  json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"},"max":{"type":"integer"}},"required":["query"]}`),
}

var mealTool = llm.ToolSpec{
	Name:        "log_meal",
	Description: "Log a meal the user ate.",
	Parameters:  json.RawMessage(`{"type":"object","properties":{"meal":{"type":"string"}},"required":["meal"]}`),
}

// TestOpenAIToolCalls checks that scripted calls, whose arguments stream in
// 4-byte pieces, arrive whole, in order, after the text, and only once the
// finish reason is known.
func TestOpenAIToolCalls(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		reply sim.Reply
		text  string
		want  []llm.ToolCall
	}{
		{"one call", sim.Reply{ToolCalls: []sim.ScriptCall{
			{Name: "find_recipes", Arguments: map[string]any{"query": "pasta with lemon and parmesan", "max": 3}},
		}}, "", []llm.ToolCall{
			{Name: "find_recipes", Arguments: `{"max":3,"query":"pasta with lemon and parmesan"}`},
		}},
		{"two parallel calls after text", sim.Reply{Text: "Let me look.", ToolCalls: []sim.ScriptCall{
			{Name: "find_recipes", Arguments: map[string]any{"query": "soup"}},
			{Name: "log_meal", Arguments: `{"meal":"tomato soup, two bowls"}`},
		}}, "Let me look.", []llm.ToolCall{
			{Name: "find_recipes", Arguments: `{"query":"soup"}`},
			{Name: "log_meal", Arguments: `{"meal":"tomato soup, two bowls"}`},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, url := newSim(t, sim.Config{Script: sim.Script{Rules: []sim.Rule{{Name: c.name, Reply: c.reply}}}})
			req := userRequest("gpt-4o", "find me something")
			req.Tools = []llm.ToolSpec{recipeTool, mealTool}
			st, err := newOpenAI(t, url, 0, nil).Stream(t.Context(), req)
			if err != nil {
				t.Fatalf("Stream: %v", err)
			}
			r := drain(t, st)
			if r.err != nil {
				t.Fatalf("stream: %v", r.err)
			}
			if r.text != c.text {
				t.Errorf("text: got %q, want %q", r.text, c.text)
			}
			if len(r.calls) != len(c.want) {
				t.Fatalf("calls: got %+v, want %d", r.calls, len(c.want))
			}
			ids := map[string]bool{}
			for i, got := range r.calls {
				if got.Name != c.want[i].Name || got.Arguments != c.want[i].Arguments {
					t.Errorf("call %d: got %s(%s), want %s(%s)", i, got.Name, got.Arguments, c.want[i].Name, c.want[i].Arguments)
				}
				if got.ID == "" || ids[got.ID] {
					t.Errorf("call %d: id %q is empty or repeated", i, got.ID)
				}
				ids[got.ID] = true
			}
			// Text first, then the calls, then done.
			want := []llm.EventKind{}
			for range r.deltas {
				want = append(want, llm.EventText)
			}
			for range c.want {
				want = append(want, llm.EventToolCall)
			}
			want = append(want, llm.EventDone)
			if !reflect.DeepEqual(r.order, want) {
				t.Errorf("event order: got %v, want %v", r.order, want)
			}
			if r.done.FinishReason != llm.FinishToolCalls {
				t.Errorf("finish: got %q, want tool_calls", r.done.FinishReason)
			}
		})
	}
}

// TestOpenAIToolRoundTrip sends a conversation holding an assistant's call
// and the tool's answer: the simulator links them by call id and answers
// with the tool's name, which it can only know from the assistant message.
func TestOpenAIToolRoundTrip(t *testing.T) {
	t.Parallel()
	_, url := newSim(t, sim.Config{})
	req := llm.Request{Model: "gpt-4o", Tools: []llm.ToolSpec{recipeTool}, Messages: []llm.Message{
		{Role: llm.RoleSystem, Content: "You are a cook."},
		{Role: llm.RoleUser, Content: "find a pasta recipe"},
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "call_1", Name: "find_recipes", Arguments: `{"query":"pasta"}`}}},
		{Role: llm.RoleTool, ToolCallID: "call_1", Content: `{"recipes":[{"title":"Cacio e pepe"}]}`},
	}}
	st, err := newOpenAI(t, url, 0, nil).Stream(t.Context(), req)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	r := drain(t, st)
	if r.err != nil {
		t.Fatal(r.err)
	}
	if !strings.Contains(r.text, "find_recipes") || len(r.calls) != 0 {
		t.Errorf("got text %q and calls %+v, want an answer naming find_recipes", r.text, r.calls)
	}
}

// TestOpenAIForcedTool names a tool the user's words do not point to; the
// simulator obeys tool_choice as the API does.
func TestOpenAIForcedTool(t *testing.T) {
	t.Parallel()
	_, url := newSim(t, sim.Config{})
	req := userRequest("gpt-4o", "find me a pasta recipe")
	req.Tools = []llm.ToolSpec{recipeTool, mealTool}
	req.ToolChoice = "log_meal"
	st, err := newOpenAI(t, url, 0, nil).Stream(t.Context(), req)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	r := drain(t, st)
	if r.err != nil {
		t.Fatal(r.err)
	}
	if len(r.calls) != 1 || r.calls[0].Name != "log_meal" {
		t.Errorf("calls: got %+v, want one log_meal", r.calls)
	}
}

// TestOpenAICachedUsage repeats a prompt of 1,252 tokens: the second call
// reports the simulator's cached prefix (9 blocks of 128) inside the input
// tokens, as OpenAI does.
func TestOpenAICachedUsage(t *testing.T) {
	t.Parallel()
	_, url := newSim(t, sim.Config{})
	o := newOpenAI(t, url, 0, nil)
	req := llm.Request{Model: "gpt-4o", Messages: []llm.Message{
		{Role: llm.RoleSystem, Content: strings.Repeat("abcd", 1250)},
		{Role: llm.RoleUser, Content: "hello"},
	}}
	for i, wantCached := range []int64{0, 1152} {
		st, err := o.Stream(t.Context(), req)
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		r := drain(t, st)
		if r.err != nil {
			t.Fatalf("call %d: %v", i, r.err)
		}
		if u := r.done.Usage; u.InputTokens != 1252 || u.CachedInputTokens != wantCached || u.CacheWriteInputTokens != 0 {
			t.Errorf("call %d: input %d, cached %d, written %d; want 1252, %d, 0", i, u.InputTokens, u.CachedInputTokens, u.CacheWriteInputTokens, wantCached)
		}
	}
	// A model that bills cache writes reports them apart from the cached.
	req.Model = "gpt-6-luna"
	for i, want := range [][2]int64{{0, 1152}, {1152, 0}} {
		st, err := o.Stream(t.Context(), req)
		if err != nil {
			t.Fatalf("luna call %d: %v", i, err)
		}
		r := drain(t, st)
		if r.err != nil {
			t.Fatalf("luna call %d: %v", i, r.err)
		}
		if u := r.done.Usage; u.CachedInputTokens != want[0] || u.CacheWriteInputTokens != want[1] {
			t.Errorf("luna call %d: cached %d, written %d; want %d, %d", i, u.CachedInputTokens, u.CacheWriteInputTokens, want[0], want[1])
		}
	}
}

// TestOpenAIRequestShape reads the JSON openai-go sends for each Request
// field.
func TestOpenAIRequestShape(t *testing.T) {
	t.Parallel()
	_, url := newSim(t, sim.Config{})
	cases := []struct {
		name string
		req  func() llm.Request
		want map[string]any // JSON paths a.b → value; nil value means absent
	}{
		{"plain", func() llm.Request { return userRequest("gpt-4o", "hi") }, map[string]any{
			"stream": true, "stream_options.include_usage": true,
			"tool_choice": nil, "tools": nil, "max_tokens": nil, "max_completion_tokens": nil, "safety_identifier": nil,
		}},
		{"a reasoning model with a token bound and a safety identifier", func() llm.Request {
			r := userRequest("o3", "hi")
			r.MaxOutputTokens = 300
			r.SafetyIdentifier = "u_9f2c"
			return r
		}, map[string]any{"max_completion_tokens": 300.0, "max_tokens": nil, "safety_identifier": "u_9f2c"}},
		{"tools default to auto", func() llm.Request {
			r := userRequest("gpt-4o", "hi")
			r.Tools = []llm.ToolSpec{recipeTool}
			return r
		}, map[string]any{
			"tool_choice": "auto", "tools.0.type": "function", "tools.0.function.name": "find_recipes",
			"tools.0.function.description":           "Find recipes by ingredient.",
			"tools.0.function.parameters.required.0": "query",
		}},
		{"required", func() llm.Request {
			r := userRequest("gpt-4o", "hi")
			r.Tools, r.ToolChoice = []llm.ToolSpec{recipeTool}, "required"
			return r
		}, map[string]any{"tool_choice": "required"}},
		{"a named tool", func() llm.Request {
			r := userRequest("gpt-4o", "hi")
			r.Tools, r.ToolChoice = []llm.ToolSpec{recipeTool, mealTool}, "log_meal"
			return r
		}, map[string]any{"tool_choice.type": "function", "tool_choice.function.name": "log_meal"}},
		{"none without tools", func() llm.Request {
			r := userRequest("gpt-4o", "hi")
			r.ToolChoice = "none"
			return r
		}, map[string]any{"tool_choice": nil}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			rec := &recorder{}
			st, err := newOpenAI(t, url, 0, rec).Stream(t.Context(), c.req())
			if err != nil {
				t.Fatalf("Stream: %v", err)
			}
			if r := drain(t, st); r.err != nil {
				t.Fatal(r.err)
			}
			var body any
			if err := json.Unmarshal(rec.last(t), &body); err != nil {
				t.Fatal(err)
			}
			for path, want := range c.want {
				got, ok := jsonPath(body, path)
				if want == nil {
					if ok {
						t.Errorf("%s: got %v, want it absent", path, got)
					}
					continue
				}
				if !ok || !reflect.DeepEqual(got, want) {
					t.Errorf("%s: got %v (present %v), want %v", path, got, ok, want)
				}
			}
		})
	}
}

// jsonPath walks a decoded JSON value along dot-separated keys and array
// indexes.
func jsonPath(v any, path string) (any, bool) {
	for _, key := range strings.Split(path, ".") {
		switch t := v.(type) {
		case map[string]any:
			next, ok := t[key]
			if !ok {
				return nil, false
			}
			v = next
		case []any:
			i := 0
			for _, c := range key {
				i = i*10 + int(c-'0')
			}
			if i >= len(t) {
				return nil, false
			}
			v = t[i]
		default:
			return nil, false
		}
	}
	return v, true
}

// TestOpenAIRefusesBadRequests checks the mistakes caught before any
// request is sent.
func TestOpenAIRefusesBadRequests(t *testing.T) {
	t.Parallel()
	s, url := newSim(t, sim.Config{})
	o := newOpenAI(t, url, 0, nil)
	user := []llm.Message{{Role: llm.RoleUser, Content: "hi"}}
	cases := []struct {
		name string
		req  llm.Request
	}{
		{"no model", llm.Request{Messages: user}},
		{"no messages", llm.Request{Model: "gpt-4o"}},
		{"unknown role", llm.Request{Model: "gpt-4o", Messages: []llm.Message{{Role: "developer", Content: "x"}}}},
		{"tool message without a call id", llm.Request{Model: "gpt-4o", Messages: []llm.Message{{Role: llm.RoleTool, Content: "x"}}}},
		{"negative max tokens", llm.Request{Model: "gpt-4o", Messages: user, MaxOutputTokens: -1}},
		{"tool without a name", llm.Request{Model: "gpt-4o", Messages: user, Tools: []llm.ToolSpec{{}}}},
		{"parameters not an object", llm.Request{Model: "gpt-4o", Messages: user, Tools: []llm.ToolSpec{{Name: "x", Parameters: json.RawMessage(`[1]`)}}}},
		{"a forced tool not offered", llm.Request{Model: "gpt-4o", Messages: user, Tools: []llm.ToolSpec{recipeTool}, ToolChoice: "log_meal"}},
		{"required without tools", llm.Request{Model: "gpt-4o", Messages: user, ToolChoice: "required"}},
	}
	for _, c := range cases {
		_, err := o.Stream(t.Context(), c.req)
		if err == nil {
			t.Errorf("%s: got nil error", c.name)
			continue
		}
		if e := asError(t, err); e.Code != llm.UnknownProviderError || e.Retryable {
			t.Errorf("%s: got %s retryable %v, want UNKNOWN_PROVIDER_ERROR, not retryable", c.name, e.Code, e.Retryable)
		}
	}
	if n := s.Stats().Endpoints[sim.EndpointChatCompletions].Requests; n != 0 {
		t.Errorf("requests sent: got %d, want 0", n)
	}
}

func TestNewOpenAIChecksParams(t *testing.T) {
	t.Parallel()
	for _, p := range []openai.Params{
		{APIKey: "k"},
		{BaseURL: "http://x/v1"},
		{BaseURL: "ftp://x/v1", APIKey: "k"},
		{BaseURL: "http://x/v1", APIKey: "k", Timeout: -1},
	} {
		if _, err := openai.New(p); err == nil {
			t.Errorf("New(%+v): got nil error", p)
		}
	}
}
