package openai_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/llm/openai"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// The adapter's Responses upstream against the simulator, openai-go
// underneath both: the same events as the chat path, and a reasoning
// model's reasoning carried across a tool call.

const respModel = "o3" // a reasoning model on the simulator

var respScript = sim.Script{Text: "Hello there.", Rules: []sim.Rule{
	{Name: "weather", When: sim.When{Contains: []string{"weather"}, ToolResults: boolp(false)},
		Reply: sim.Reply{ToolCalls: []sim.ScriptCall{{Name: "get_weather", Arguments: map[string]any{"city": "Paris"}}}}},
	{Name: "weathered", When: sim.When{Contains: []string{"weather"}, ToolResults: boolp(true)}, Reply: sim.Reply{Text: "Sunny in Paris."}},
}}

func boolp(b bool) *bool { return &b }

var weatherSpec = llm.ToolSpec{Name: "get_weather", Description: "The weather in a city.",
	Parameters: []byte(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false}`), Strict: true}

// respAdapter is an adapter calling models over Responses, on a fresh
// simulator, with every request body recorded.
func respAdapter(t *testing.T, scope string, models ...string) (*openai.OpenAI, *sim.Server, string, *bodies) {
	t.Helper()
	s, ts := simtest.NewServer(t, sim.Config{Latency: simtest.ZeroLatency(), Script: respScript})
	rec := &bodies{}
	o, err := openai.New(openai.Params{BaseURL: ts.URL + "/v1", APIKey: simtest.TestKey, HTTPClient: &http.Client{Transport: rec},
		ResponsesModels: models, Scope: scope})
	if err != nil {
		t.Fatal(err)
	}
	return o, s, ts.URL, rec
}

// drained is everything a stream gave: text, whole calls, its end.
type drained struct {
	text   string
	deltas []llm.Event
	calls  []llm.ToolCall
	done   llm.Event
}

func drain(t *testing.T, p llm.Provider, req llm.Request) (drained, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	var d drained
	s, err := p.Stream(ctx, req)
	if err != nil {
		return d, err
	}
	defer s.Close()
	for {
		ev, err := s.Next(ctx)
		if errors.Is(err, io.EOF) {
			return d, nil
		}
		if err != nil {
			return d, err
		}
		switch ev.Kind {
		case llm.EventText:
			d.text += ev.Text
		case llm.EventToolCallDelta:
			d.deltas = append(d.deltas, ev)
		case llm.EventToolCall:
			d.calls = append(d.calls, *ev.ToolCall)
		case llm.EventDone:
			d.done = ev
		}
	}
}

// Text over Responses, streamed and whole: the answer, stop, and the
// usage the simulator reports to openai-go for the same request (the
// oracle), reasoning tokens among the output tokens. The request is
// stateless and asks for the encrypted reasoning.
func TestResponsesText(t *testing.T) {
	t.Parallel()
	o, _, url, rec := respAdapter(t, "acct", respModel)
	client := simtest.Client(url)
	want, err := client.Responses.New(t.Context(), responses.ResponseNewParams{Model: respModel,
		Reasoning: oai.ReasoningParam{Effort: oai.ReasoningEffortLow}, Store: oai.Bool(false),
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{
			responses.ResponseInputItemParamOfMessage("Be brief.", responses.EasyInputMessageRoleSystem),
			responses.ResponseInputItemParamOfMessage("hello", responses.EasyInputMessageRoleUser)}}})
	if err != nil {
		t.Fatal(err)
	}
	if want.Usage.OutputTokensDetails.ReasoningTokens != 64 {
		t.Fatalf("the simulator's reasoning tokens at low = %d, want its documented 64", want.Usage.OutputTokensDetails.ReasoningTokens)
	}
	for _, whole := range []bool{false, true} {
		d, err := drain(t, o, llm.Request{Model: respModel, Whole: whole, ReasoningEffort: "low",
			Messages: []llm.Message{{Role: llm.RoleSystem, Content: "Be brief."}, {Role: llm.RoleUser, Content: "hello"}}})
		if err != nil {
			t.Fatalf("whole %v: %v", whole, err)
		}
		u := d.done.Usage
		if d.text != want.OutputText() || d.done.FinishReason != llm.FinishStop || u == nil {
			t.Fatalf("whole %v: text %q finish %q usage %+v, want %q stop", whole, d.text, d.done.FinishReason, u, want.OutputText())
		}
		if u.InputTokens != want.Usage.InputTokens || u.CachedInputTokens != want.Usage.InputTokensDetails.CachedTokens {
			t.Errorf("whole %v: input tokens %d (%d cached), want %d (%d)", whole, u.InputTokens, u.CachedInputTokens,
				want.Usage.InputTokens, want.Usage.InputTokensDetails.CachedTokens)
		}
		if u.OutputTokens != want.Usage.OutputTokens || u.Model != want.Model {
			t.Errorf("whole %v: output tokens %d (model %q), want %d with the 64 reasoning (%q)", whole, u.OutputTokens, u.Model, want.Usage.OutputTokens, want.Model)
		}
		body := rec.last()
		for _, s := range []string{`"store":false`, `"include":["reasoning.encrypted_content"]`, `"effort":"low"`} {
			if !strings.Contains(body, s) {
				t.Errorf("whole %v: the request lacks %s: %s", whole, s, body)
			}
		}
		if strings.Contains(body, `"stream":true`) == whole {
			t.Errorf("whole %v: stream flag wrong in %s", whole, body)
		}
	}
}

// A tool call round trip: the call comes as the chat path's (a minted
// id, deltas, the whole call, tool_calls) carrying the reasoning that
// preceded it; sent back in the history, the reasoning item goes before
// the call with its encrypted_content, and the simulator accepts it.
// Another scope's reasoning is not sent.
func TestResponsesToolRoundTrip(t *testing.T) {
	t.Parallel()
	o, s, _, rec := respAdapter(t, "acct", respModel)
	user := llm.Message{Role: llm.RoleUser, Content: "What is the weather in Paris?"}
	for _, whole := range []bool{false, true} {
		d, err := drain(t, o, llm.Request{Model: respModel, Whole: whole, Messages: []llm.Message{user}, Tools: []llm.ToolSpec{weatherSpec}})
		if err != nil {
			t.Fatal(err)
		}
		if len(d.calls) != 1 || d.done.FinishReason != llm.FinishToolCalls {
			t.Fatalf("whole %v: calls %+v finish %q", whole, d.calls, d.done.FinishReason)
		}
		tc := d.calls[0]
		if !strings.HasPrefix(tc.ID, "call_") || tc.Name != "get_weather" || tc.Arguments != `{"city":"Paris"}` {
			t.Fatalf("whole %v: call %+v", whole, tc)
		}
		if tc.SignedBy != "openai-responses:acct/"+respModel || !strings.Contains(tc.Signature, `"encrypted_content":"gAAAAA`) {
			t.Fatalf("whole %v: the call carries no reasoning: %q %q", whole, tc.SignedBy, tc.Signature)
		}
		var args string
		for _, ev := range d.deltas {
			args += ev.ToolCall.Arguments
		}
		if len(d.deltas) == 0 || d.deltas[0].ToolCall.ID != tc.ID || d.deltas[0].ToolCall.Name != tc.Name || args != tc.Arguments {
			t.Errorf("whole %v: deltas %+v do not add up to the call", whole, d.deltas)
		}
		before := s.Stats().Endpoints["/v1/responses"].ReasoningItemsAccepted
		history := []llm.Message{user, {Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{tc}},
			{Role: llm.RoleTool, ToolCallID: tc.ID, Content: `{"sky":"clear"}`}}
		d, err = drain(t, o, llm.Request{Model: respModel, Whole: whole, Messages: history, Tools: []llm.ToolSpec{weatherSpec}})
		if err != nil {
			t.Fatal(err)
		}
		if d.text != "Sunny in Paris." || d.done.FinishReason != llm.FinishStop {
			t.Fatalf("whole %v: after the tool, %q %q", whole, d.text, d.done.FinishReason)
		}
		body := rec.last()
		if r, c := strings.Index(body, `"type":"reasoning"`), strings.Index(body, `"type":"function_call"`); r < 0 || c < r {
			t.Errorf("whole %v: the reasoning item does not lead the call: %s", whole, body)
		}
		if got := s.Stats().Endpoints["/v1/responses"].ReasoningItemsAccepted - before; got != 1 {
			t.Errorf("whole %v: the simulator accepted %d reasoning items, want 1", whole, got)
		}

		// The same history signed in another scope: the call goes back
		// without the reasoning (the model reasons anew), and is answered.
		other := tc
		other.SignedBy = "openai-responses:another-account"
		history[1].ToolCalls = []llm.ToolCall{other}
		if _, err := drain(t, o, llm.Request{Model: respModel, Whole: whole, Messages: history, Tools: []llm.ToolSpec{weatherSpec}}); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(rec.last(), `"type":"reasoning"`) {
			t.Errorf("whole %v: another scope's reasoning was sent: %s", whole, rec.last())
		}
	}
}

// An upstream failure over Responses is the chat path's llm.Error for the
// same fault: before the stream (429 with its wait) and inside it (an
// error event, then response.failed).
func TestResponsesErrorsLikeChat(t *testing.T) {
	t.Parallel()
	for _, f := range []sim.Fault{
		{Kind: "rate_limit", RetryAfter: 7, Count: 1},
		{Kind: "server_error", Count: 1},
		{Kind: "stream_error", AfterChunks: 3, Count: 1},
	} {
		var got [2]*llm.Error
		for i, viaResponses := range []bool{false, true} {
			models := []string{}
			endpoint := sim.EndpointChatCompletions
			if viaResponses {
				models, endpoint = []string{respModel}, "/v1/responses"
			}
			o, s, _, _ := respAdapter(t, "acct", models...)
			f.Endpoint = endpoint
			if _, err := s.AddFault(f); err != nil {
				t.Fatal(err)
			}
			_, err := drain(t, o, llm.Request{Model: respModel, Messages: []llm.Message{{Role: llm.RoleUser, Content: "hello"}}})
			if !errors.As(err, &got[i]) {
				t.Fatalf("%s over %s: %v, want an *llm.Error", f.Kind, endpoint, err)
			}
			if s.Stats().Endpoints[endpoint].FaultsServed != 1 {
				t.Fatalf("%s: the fault was not served on %s", f.Kind, endpoint)
			}
		}
		c, r := got[0], got[1]
		if c.Code != r.Code || c.Status != r.Status || c.Retryable != r.Retryable || c.RetryAfter != r.RetryAfter {
			t.Errorf("%s: chat %s/%d/%v/%d, responses %s/%d/%v/%d", f.Kind, c.Code, c.Status, c.Retryable, c.RetryAfter,
				r.Code, r.Status, r.Retryable, r.RetryAfter)
		}
	}
}
