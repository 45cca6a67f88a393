package anthropic_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/voxgate/voxgate/internal/testkit"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// anthClient is the real SDK pointed at the simulator's root, as
// ANTHROPIC_BASE_URL would point it.
func anthClient(t *testing.T, cfg sim.Config) (*sim.Server, anthropic.Client, string) {
	t.Helper()
	s, url := testkit.NewSim(t, cfg)
	c := anthropic.NewClient(option.WithBaseURL(url), option.WithAPIKey(simtest.TestKey), option.WithMaxRetries(0))
	return s, c, url
}

var anthWeather = anthropic.ToolUnionParam{OfTool: &anthropic.ToolParam{Name: "get_weather", Description: anthropic.String("Weather in a city."),
	InputSchema: anthropic.ToolInputSchemaParam{Properties: map[string]any{"city": map[string]any{"type": "string"}}}}}

func anthScript() sim.Script {
	yes, no := true, false
	return sim.Script{Rules: []sim.Rule{
		{When: sim.When{Contains: []string{"weather"}, ToolResults: &no},
			Reply: sim.Reply{Text: "Let me check.", ToolCalls: []sim.ScriptCall{{Name: "get_weather", Arguments: map[string]any{"city": "Paris"}}}}},
		{When: sim.When{ToolResults: &yes}, Reply: sim.Reply{Text: "It is sunny ({{tool_names}})."}},
	}}
}

func tokens(s string) int64 { return int64((len(s) + 3) / 4) }

func TestAnthropicMessageCounts(t *testing.T) {
	_, c, _ := anthClient(t, sim.Config{Script: sim.Script{Text: "Hello there, friend."}})
	msg, err := c.Messages.New(t.Context(), anthropic.MessageNewParams{Model: "claude-haiku-5-5", MaxTokens: 100,
		System:   []anthropic.TextBlockParam{{Text: "Be brief."}},
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi"))}})
	if err != nil {
		t.Fatal(err)
	}
	if len(msg.Content) != 1 || msg.Content[0].Text != "Hello there, friend." || msg.StopReason != anthropic.StopReasonEndTurn {
		t.Fatalf("message %+v", msg)
	}
	if msg.Usage.InputTokens != 3 { // ceil(len("Be brief."+"hi") / 4)
		t.Fatalf("input tokens %d, want 3", msg.Usage.InputTokens)
	}
	if msg.Usage.OutputTokens != tokens("Hello there, friend.") || msg.Usage.CacheReadInputTokens != 0 || msg.Usage.CacheCreationInputTokens != 0 {
		t.Fatalf("usage %+v", msg.Usage)
	}
	if msg.Model != "claude-haiku-5-5" || !strings.HasPrefix(msg.ID, "msg_") {
		t.Fatalf("id %q model %q", msg.ID, msg.Model)
	}
}

// stream reads a whole streamed Message with the SDK's own accumulator.
func stream(t *testing.T, c anthropic.Client, p anthropic.MessageNewParams) (anthropic.Message, []string, error) {
	t.Helper()
	st := c.Messages.NewStreaming(t.Context(), p)
	defer st.Close()
	var msg anthropic.Message
	var types []string
	for st.Next() {
		ev := st.Current()
		types = append(types, ev.Type)
		if err := msg.Accumulate(ev); err != nil {
			t.Fatalf("accumulate %s: %v", ev.Type, err)
		}
	}
	return msg, types, st.Err()
}

func TestAnthropicStreamToolLoop(t *testing.T) {
	_, c, _ := anthClient(t, sim.Config{Script: anthScript()})
	user := anthropic.NewUserMessage(anthropic.NewTextBlock("what's the weather?"))
	p := anthropic.MessageNewParams{Model: "claude-sonnet-5-5", MaxTokens: 200, Tools: []anthropic.ToolUnionParam{anthWeather},
		Messages: []anthropic.MessageParam{user}}
	msg, types, err := stream(t, c, p)
	if err != nil {
		t.Fatal(err)
	}
	if types[0] != "message_start" || types[len(types)-2] != "message_delta" || types[len(types)-1] != "message_stop" {
		t.Fatalf("event order %v", types)
	}
	if msg.StopReason != anthropic.StopReasonToolUse || len(msg.Content) != 2 {
		t.Fatalf("message %+v", msg)
	}
	tu := msg.Content[1]
	if tu.Type != "tool_use" || tu.Name != "get_weather" || string(tu.Input) != `{"city":"Paris"}` || !strings.HasPrefix(tu.ID, "toolu_") {
		t.Fatalf("tool use %+v input %s", tu, tu.Input)
	}
	if msg.Usage.OutputTokens != tokens("Let me check."+"get_weather"+`{"city":"Paris"}`) {
		t.Fatalf("output tokens %d", msg.Usage.OutputTokens)
	}
	p.Messages = append(p.Messages, msg.ToParam(),
		anthropic.NewUserMessage(anthropic.NewToolResultBlock(tu.ID, `{"sky":"clear"}`, false)))
	msg, _, err = stream(t, c, p)
	if err != nil {
		t.Fatal(err)
	}
	if msg.StopReason != anthropic.StopReasonEndTurn || msg.Content[0].Text != "It is sunny (get_weather)." {
		t.Fatalf("answer %+v", msg)
	}
}

// A history whose tool ids were minted elsewhere (the gateway's call_…)
// is accepted; a tool_use left without its result is refused as the API
// refuses it.
func TestAnthropicForeignToolIDs(t *testing.T) {
	_, c, _ := anthClient(t, sim.Config{Script: anthScript()})
	hist := []anthropic.MessageParam{
		anthropic.NewUserMessage(anthropic.NewTextBlock("weather?")),
		anthropic.NewAssistantMessage(anthropic.NewToolUseBlock("call_abc123DEF456", map[string]any{"city": "Oslo"}, "get_weather")),
	}
	p := anthropic.MessageNewParams{Model: "claude-haiku-5-5", MaxTokens: 50, Tools: []anthropic.ToolUnionParam{anthWeather}, Messages: hist}
	_, err := c.Messages.New(t.Context(), p)
	var apiErr *anthropic.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || apiErr.Type() != anthropic.ErrorTypeInvalidRequestError ||
		!strings.Contains(apiErr.RawJSON(), "without `tool_result` blocks") {
		t.Fatalf("unanswered tool_use: %v", err)
	}
	p.Messages = append(hist, anthropic.NewUserMessage(anthropic.NewToolResultBlock("call_abc123DEF456", "rain", false)))
	msg, err := c.Messages.New(t.Context(), p)
	if err != nil || msg.Content[0].Text != "It is sunny (get_weather)." {
		t.Fatalf("answer %+v, %v", msg, err)
	}
}

func TestAnthropicCacheClasses(t *testing.T) {
	_, c, _ := anthClient(t, sim.Config{Script: sim.Script{Text: "ok"}})
	long := strings.Repeat("abcd", 1100) // 1,100 tokens: past the 1,024 minimum
	p := anthropic.MessageNewParams{Model: "claude-haiku-5-5", MaxTokens: 10,
		CacheControl: anthropic.NewCacheControlEphemeralParam(),
		Messages:     []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(long))}}
	first, err := c.Messages.New(t.Context(), p)
	if err != nil {
		t.Fatal(err)
	}
	u := first.Usage
	if u.CacheReadInputTokens != 0 || u.CacheCreationInputTokens != 1024 || u.InputTokens != 1100-1024 {
		t.Fatalf("first usage %+v", u)
	}
	p.Messages = append(p.Messages, first.ToParam(), anthropic.NewUserMessage(anthropic.NewTextBlock(long)))
	msg, _, err := stream(t, c, p)
	if err != nil {
		t.Fatal(err)
	}
	u = msg.Usage
	total := int64(1100 + 1 + 1100) // "ok" is one token
	if u.CacheReadInputTokens != 1024 || u.InputTokens+u.CacheReadInputTokens+u.CacheCreationInputTokens != total || u.CacheCreationInputTokens == 0 {
		t.Fatalf("second usage %+v, want read 1024 and classes summing to %d", u, total)
	}
	// Without a cache_control breakpoint nothing is cached.
	p.CacheControl = anthropic.CacheControlEphemeralParam{}
	plain, err := c.Messages.New(t.Context(), p)
	if err != nil || plain.Usage.CacheReadInputTokens != 0 || plain.Usage.InputTokens != total {
		t.Fatalf("uncached usage %+v, %v", plain.Usage, err)
	}
}

func TestAnthropicRefusalAndNoStop(t *testing.T) {
	s, c, _ := anthClient(t, sim.Config{Script: sim.Script{Text: "A long enough answer to span chunks."}})
	p := anthropic.MessageNewParams{Model: "claude-haiku-5-5", MaxTokens: 100,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi"))}}
	mustFault(t, s, sim.Fault{Endpoint: sim.EndpointAnthropicMessages, Kind: sim.FaultContentFilter, AfterChunks: 4})
	msg, types, err := stream(t, c, p)
	if err != nil || msg.StopReason != anthropic.StopReasonRefusal || types[len(types)-1] != "message_stop" {
		t.Fatalf("refusal: %v %v %+v", err, types, msg)
	}
	mustFault(t, s, sim.Fault{Endpoint: sim.EndpointAnthropicMessages, Kind: sim.FaultContentFilter, AfterChunks: 1000})
	msg, types, err = stream(t, c, p)
	if err != nil || msg.StopReason != anthropic.StopReasonRefusal || types[len(types)-1] != "message_stop" ||
		types[len(types)-2] != "message_delta" || msg.Content[0].Text != "A long enough answer to span chunks." {
		t.Fatalf("refusal past the end: %v %v %+v", err, types, msg)
	}
	mustFault(t, s, sim.Fault{Endpoint: sim.EndpointAnthropicMessages, Kind: sim.FaultContentFilter})
	if msg, err := c.Messages.New(t.Context(), p); err != nil || msg.StopReason != anthropic.StopReasonRefusal || len(msg.Content) != 0 {
		t.Fatalf("refusal: %v %+v", err, msg)
	}
	mustFault(t, s, sim.Fault{Endpoint: sim.EndpointAnthropicMessages, Kind: sim.FaultNoDone})
	msg, types, err = stream(t, c, p)
	if err != nil || types[len(types)-1] != "message_delta" || msg.StopReason != anthropic.StopReasonEndTurn {
		t.Fatalf("no message_stop: %v %v", err, types)
	}
}

func mustFault(t *testing.T, s *sim.Server, f sim.Fault) {
	t.Helper()
	if _, err := s.AddFault(f); err != nil {
		t.Fatal(err)
	}
}

func TestAnthropicErrors(t *testing.T) {
	s, c, _ := anthClient(t, sim.Config{})
	p := anthropic.MessageNewParams{Model: "claude-haiku-5-5", MaxTokens: 100,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi"))}}
	for _, tc := range []struct {
		fault      sim.Fault
		status     int
		typ        anthropic.ErrorType
		retryAfter string
	}{
		{sim.Fault{Kind: sim.FaultRateLimit, RetryAfter: 2}, 429, anthropic.ErrorTypeRateLimitError, "2"},
		{sim.Fault{Kind: sim.FaultRateLimit}, 429, anthropic.ErrorTypeRateLimitError, ""},
		{sim.Fault{Kind: sim.FaultUnavailable}, 529, anthropic.ErrorTypeOverloadedError, ""},
		{sim.Fault{Kind: sim.FaultServerError}, 500, anthropic.ErrorTypeAPIError, ""},
		{sim.Fault{Kind: sim.FaultQuota}, 400, anthropic.ErrorTypeInvalidRequestError, ""},
		{sim.Fault{Kind: sim.FaultContextLength}, 400, anthropic.ErrorTypeInvalidRequestError, ""},
		{sim.Fault{Kind: sim.FaultStreamError}, 529, anthropic.ErrorTypeOverloadedError, ""},
	} {
		t.Run(string(tc.fault.Kind), func(t *testing.T) {
			tc.fault.Endpoint = sim.EndpointAnthropicMessages
			mustFault(t, s, tc.fault)
			_, err := c.Messages.New(t.Context(), p)
			var apiErr *anthropic.Error
			if !errors.As(err, &apiErr) || apiErr.StatusCode != tc.status || apiErr.Type() != tc.typ {
				t.Fatalf("got %v, want %d %s", err, tc.status, tc.typ)
			}
			if got := apiErr.Response.Header.Get("Retry-After"); got != tc.retryAfter || apiErr.RequestID == "" {
				t.Fatalf("retry-after %q request-id %q", got, apiErr.RequestID)
			}
		})
	}
	t.Run("in-stream error", func(t *testing.T) {
		mustFault(t, s, sim.Fault{Endpoint: sim.EndpointAnthropicMessages, Kind: sim.FaultStreamError, AfterChunks: 3})
		_, types, err := stream(t, c, p)
		var apiErr *anthropic.Error
		if !errors.As(err, &apiErr) || apiErr.StatusCode != 200 || apiErr.Type() != anthropic.ErrorTypeOverloadedError || len(types) != 2 { // the ping is not an event to the SDK
			t.Fatalf("got %v after %v", err, types)
		}
	})
	t.Run("reset", func(t *testing.T) {
		mustFault(t, s, sim.Fault{Endpoint: sim.EndpointAnthropicMessages, Kind: sim.FaultReset})
		_, err := c.Messages.New(t.Context(), p)
		var apiErr *anthropic.Error
		if err == nil || errors.As(err, &apiErr) {
			t.Fatalf("reset: got %v, want a transport error", err)
		}
	})
	t.Run("malformed", func(t *testing.T) {
		mustFault(t, s, sim.Fault{Endpoint: sim.EndpointAnthropicMessages, Kind: sim.FaultMalformedJSON, AfterChunks: 2})
		_, _, err := stream(t, c, p)
		var syn *json.SyntaxError
		if !errors.As(err, &syn) {
			t.Fatalf("malformed event: got %v", err)
		}
	})
}

// The API's own header checks, which the SDK never trips: raw requests.
func TestAnthropicHeaders(t *testing.T) {
	_, url := testkit.NewSim(t, sim.Config{Keys: []string{"good"}})
	body := `{"model":"claude-haiku-5-5","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`
	for _, tc := range []struct {
		key, version string
		status       int
		typ          string
	}{
		{"", "2023-06-01", 401, "authentication_error"},
		{"bad", "2023-06-01", 401, "authentication_error"},
		{"good", "", 400, "invalid_request_error"},
		{"good", "2099-01-01", 400, "invalid_request_error"},
		{"good", "2023-06-01", 200, ""},
	} {
		req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, url+"/v1/messages", strings.NewReader(body))
		req.Header.Set("X-Api-Key", tc.key)
		req.Header.Set("Anthropic-Version", tc.version)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var e struct {
			Type  string
			Error struct{ Type string }
		}
		_ = json.NewDecoder(resp.Body).Decode(&e)
		resp.Body.Close()
		if resp.StatusCode != tc.status || (tc.typ != "" && (e.Type != "error" || e.Error.Type != tc.typ)) || resp.Header.Get("Request-Id") == "" {
			t.Errorf("key %q version %q: %d %+v", tc.key, tc.version, resp.StatusCode, e)
		}
	}
}

// The faults that shape a non-streamed body: slow but whole, cut, or
// unreadable.
func TestAnthropicBodyFaults(t *testing.T) {
	s, c, _ := anthClient(t, sim.Config{Script: sim.Script{Text: "Whole."}})
	p := anthropic.MessageNewParams{Model: "claude-haiku-5-5", MaxTokens: 100,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi"))}}
	mustFault(t, s, sim.Fault{Endpoint: sim.EndpointAnthropicMessages, Kind: sim.FaultSlowDrip, IntervalMS: 1})
	if msg, err := c.Messages.New(t.Context(), p); err != nil || msg.Content[0].Text != "Whole." {
		t.Fatalf("slow drip: %+v, %v", msg, err)
	}
	var apiErr *anthropic.Error
	mustFault(t, s, sim.Fault{Endpoint: sim.EndpointAnthropicMessages, Kind: sim.FaultCutStream})
	if _, err := c.Messages.New(t.Context(), p); err == nil || errors.As(err, &apiErr) {
		t.Fatalf("cut body: got %v, want a transport error", err)
	}
	mustFault(t, s, sim.Fault{Endpoint: sim.EndpointAnthropicMessages, Kind: sim.FaultMalformedJSON})
	if _, err := c.Messages.New(t.Context(), p); err == nil || errors.As(err, &apiErr) {
		t.Fatalf("malformed body: got %v, want a decoding error", err)
	}
	if st := s.Stats().Endpoints[sim.EndpointAnthropicMessages]; st.Requests != 3 || st.FaultsServed != 3 {
		t.Fatalf("stats %+v", st)
	}
}

// Bodies the real API refuses, refused with its type and a message naming
// the problem.
func TestAnthropicBadRequests(t *testing.T) {
	_, url := testkit.NewSim(t, sim.Config{})
	const user = `{"role":"user","content":"hi"}`
	for _, tc := range []struct{ body, want string }{
		{`{"model":"m","messages":[` + user + `]}`, "max_tokens: Field required"},
		{`{"max_tokens":5,"messages":[` + user + `]}`, "model: Field required"},
		{`{"model":"m","max_tokens":5,"messages":[` + user + `],"user":"u1"}`, "user: Extra inputs are not permitted"},
		{`{"model":"m","max_tokens":5,"messages":[{"role":"system","content":"x"}]}`, "messages.0.role"},
		{`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":[{"type":"text","text":""}]}]}`, "text content blocks must be non-empty"},
		{`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"x","content":"r"}]}]}`, "unexpected `tool_use_id`"},
		{`{"model":"m","max_tokens":5,"messages":[` + user + `,{"role":"assistant","content":[{"type":"tool_use","id":"a.b","name":"f","input":{}}]}]}`, "messages.1.content.0.id"},
		{`{"model":"m","max_tokens":5,"tool_choice":{"type":"any"},"messages":[` + user + `]}`, "tool_choice: may only be specified while providing tools"},
		{`{"model":"m","max_tokens":5,"messages":[` + user + `]`, "valid JSON"},
	} {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, url+"/v1/messages", strings.NewReader(tc.body))
		req.Header.Set("X-Api-Key", simtest.TestKey)
		req.Header.Set("Anthropic-Version", "2023-06-01")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var e struct {
			Error struct{ Type, Message string }
		}
		_ = json.NewDecoder(resp.Body).Decode(&e)
		resp.Body.Close()
		if resp.StatusCode != 400 || e.Error.Type != "invalid_request_error" || !strings.Contains(e.Error.Message, tc.want) {
			t.Errorf("%s: %d %+v, want 400 naming %q", tc.body, resp.StatusCode, e.Error, tc.want)
		}
	}
}
