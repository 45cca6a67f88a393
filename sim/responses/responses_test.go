package responses_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"github.com/voxgate/voxgate/internal/testkit"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

func respClient(t *testing.T) (*sim.Server, openai.Client, string) {
	t.Helper()
	s, url := testkit.NewSim(t, sim.Config{})
	return s, simtest.Client(url), url
}

var weatherTool = responses.ToolParamOfFunction("get_weather", map[string]any{
	"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}},
	"required": []string{"city"}, "additionalProperties": false}, true)

func apiStatus(t *testing.T, err error) int {
	t.Helper()
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) {
		t.Fatalf("err = %v, want an API error", err)
	}
	return apiErr.StatusCode
}

func TestNewWithStringInput(t *testing.T) {
	_, c, _ := respClient(t)
	resp, err := c.Responses.New(context.Background(), responses.ResponseNewParams{
		Model: "gpt-4.1", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Say hello.")},
		Instructions: openai.String("Be brief."),
	})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Object != "response" || resp.Status != responses.ResponseStatusCompleted || len(resp.ID) < 6 || resp.ID[:5] != "resp_" {
		t.Fatalf("response = %s %s %s", resp.ID, resp.Object, resp.Status)
	}
	if resp.OutputText() == "" || resp.Output[0].Type != "message" {
		t.Fatalf("output = %+v", resp.Output)
	}
	u := resp.Usage
	if u.InputTokens == 0 || u.OutputTokens == 0 || u.TotalTokens != u.InputTokens+u.OutputTokens || u.OutputTokensDetails.ReasoningTokens != 0 {
		t.Fatalf("usage = %+v", u)
	}
	if resp.Instructions.OfString != "Be brief." || resp.Model != "gpt-4.1-2025-04-14" {
		t.Fatalf("instructions %q, model %q", resp.Instructions.OfString, resp.Model)
	}
}

// TestFunctionCallAndOutput runs a tool turn: the model calls the tool,
// the client sends the call and its output back as items, the model answers.
func TestFunctionCallAndOutput(t *testing.T) {
	_, c, _ := respClient(t)
	ctx := context.Background()
	first, err := c.Responses.New(ctx, responses.ResponseNewParams{
		Model: "gpt-4.1", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("What is the weather in Paris?")},
		Tools: []responses.ToolUnionParam{weatherTool}, ToolChoice: responses.ResponseNewParamsToolChoiceUnion{
			OfToolChoiceMode: openai.Opt(responses.ToolChoiceOptionsRequired)},
		Store: openai.Bool(false),
	})
	if err != nil {
		t.Fatal(err)
	}
	var call responses.ResponseFunctionToolCall
	for _, o := range first.Output {
		if o.Type == "function_call" {
			call = o.AsFunctionCall()
		}
	}
	if call.Name != "get_weather" || call.CallID == "" || call.Arguments == "" {
		t.Fatalf("no call in %+v", first.Output)
	}
	out := responses.ResponseInputItemParamOfFunctionCallOutput(`{"temp_c": 18}`)
	out.OfFunctionCallOutput.CallID = openai.String(call.CallID)
	items := responses.ResponseInputParam{
		responses.ResponseInputItemParamOfMessage("What is the weather in Paris?", responses.EasyInputMessageRoleUser),
		responses.ResponseInputItemParamOfFunctionCall(call.Arguments, call.CallID, call.Name),
		out,
	}
	second, err := c.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-4.1",
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: items}, Tools: []responses.ToolUnionParam{weatherTool}})
	if err != nil {
		t.Fatal(err)
	}
	if second.OutputText() == "" {
		t.Fatalf("no answer after the tool output: %+v", second.Output)
	}
	// A call without its output is refused, as the API refuses it.
	_, err = c.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-4.1",
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: items[:2]}, Tools: []responses.ToolUnionParam{weatherTool}})
	if apiStatus(t, err) != http.StatusBadRequest {
		t.Fatalf("unanswered call: %v", err)
	}
}

// TestPreviousResponseGetDelete continues a stored response, reads it and
// its input items back, deletes it, and finds it gone; another key never
// sees it.
func TestPreviousResponseGetDelete(t *testing.T) {
	_, c, url := respClient(t)
	ctx := context.Background()
	first, err := c.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-4.1",
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("My name is Ada.")}})
	if err != nil {
		t.Fatal(err)
	}
	second, err := c.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-4.1",
		Input:              responses.ResponseNewParamsInputUnion{OfString: openai.String("What is my name?")},
		PreviousResponseID: openai.String(first.ID)})
	if err != nil {
		t.Fatal(err)
	}
	if second.PreviousResponseID != first.ID || second.Usage.InputTokens <= first.Usage.InputTokens {
		t.Fatalf("continuation: previous %q, input tokens %d after %d", second.PreviousResponseID, second.Usage.InputTokens, first.Usage.InputTokens)
	}
	got, err := c.Responses.Get(ctx, second.ID, responses.ResponseGetParams{})
	if err != nil || got.ID != second.ID || got.OutputText() != second.OutputText() {
		t.Fatalf("get = %v, %v", got, err)
	}
	page, err := c.Responses.InputItems.List(ctx, second.ID, responses.InputItemListParams{})
	if err != nil || len(page.Data) != 1 || page.Data[0].Type != "message" {
		t.Fatalf("input items = %+v, %v", page, err)
	}
	other := simtest.Client(url, withKey("sk-other"))
	if _, err := other.Responses.Get(ctx, second.ID, responses.ResponseGetParams{}); apiStatus(t, err) != http.StatusNotFound {
		t.Fatalf("another key's get: %v", err)
	}
	if err := c.Responses.Delete(ctx, second.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Responses.Get(ctx, second.ID, responses.ResponseGetParams{}); apiStatus(t, err) != http.StatusNotFound {
		t.Fatalf("get after delete: %v", err)
	}
	_, err = c.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-4.1",
		Input:              responses.ResponseNewParamsInputUnion{OfString: openai.String("Again?")},
		PreviousResponseID: openai.String("resp_unknown")})
	if apiStatus(t, err) != http.StatusNotFound {
		t.Fatalf("unknown previous id: %v", err)
	}
}

// TestStreamingTextAndCall reads the typed events through the SDK: text
// deltas that add up to the completed response's text, and a call's
// arguments that add up to its done event's.
func TestStreamingTextAndCall(t *testing.T) {
	_, c, _ := respClient(t)
	ctx := context.Background()
	stream := c.Responses.NewStreaming(ctx, responses.ResponseNewParams{Model: "gpt-4.1",
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Tell me about the sea.")}})
	var text string
	var types []string
	var final responses.Response
	seq := int64(-1)
	for stream.Next() {
		e := stream.Current()
		if e.SequenceNumber != seq+1 {
			t.Fatalf("sequence %d after %d", e.SequenceNumber, seq)
		}
		seq = e.SequenceNumber
		types = append(types, e.Type)
		switch e.Type {
		case "response.output_text.delta":
			text += e.Delta
		case "response.completed":
			final = e.Response
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if types[0] != "response.created" || types[1] != "response.in_progress" || types[len(types)-1] != "response.completed" {
		t.Fatalf("events %v", types)
	}
	if text == "" || text != final.OutputText() || final.Usage.OutputTokens == 0 {
		t.Fatalf("deltas %q, final %q, usage %+v", text, final.OutputText(), final.Usage)
	}

	stream = c.Responses.NewStreaming(ctx, responses.ResponseNewParams{Model: "gpt-4.1",
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("What is the weather in Oslo?")},
		Tools: []responses.ToolUnionParam{weatherTool}, ToolChoice: responses.ResponseNewParamsToolChoiceUnion{
			OfFunctionTool: &responses.ToolChoiceFunctionParam{Name: "get_weather"}}})
	var args, done string
	for stream.Next() {
		e := stream.Current()
		switch e.Type {
		case "response.function_call_arguments.delta":
			args += e.Delta
		case "response.function_call_arguments.done":
			done = e.Arguments
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if args == "" || args != done {
		t.Fatalf("argument deltas %q, done %q", args, done)
	}
}

// TestReasoningAndMaxOutputTokens: a reasoning model reports reasoning
// tokens and a reasoning item; a budget spent inside the reasoning ends
// incomplete with nothing visible.
func TestReasoningAndMaxOutputTokens(t *testing.T) {
	_, c, _ := respClient(t)
	ctx := context.Background()
	resp, err := c.Responses.New(ctx, responses.ResponseNewParams{Model: "o3",
		Input:     responses.ResponseNewParamsInputUnion{OfString: openai.String("Why is the sky blue?")},
		Reasoning: openai.ReasoningParam{Effort: openai.ReasoningEffortLow}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Usage.OutputTokensDetails.ReasoningTokens != 64 || resp.Output[0].Type != "reasoning" || resp.OutputText() == "" {
		t.Fatalf("usage %+v, output %+v", resp.Usage, resp.Output)
	}
	resp, err = c.Responses.New(ctx, responses.ResponseNewParams{Model: "o3", MaxOutputTokens: openai.Int(32),
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Why is the sky blue?")}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Status != "incomplete" || resp.IncompleteDetails.Reason != "max_output_tokens" || resp.OutputText() != "" || resp.Usage.OutputTokens != 32 {
		t.Fatalf("status %s, details %+v, text %q, usage %+v", resp.Status, resp.IncompleteDetails, resp.OutputText(), resp.Usage)
	}
	_, err = c.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-4.1",
		Input:     responses.ResponseNewParamsInputUnion{OfString: openai.String("Hi")},
		Reasoning: openai.ReasoningParam{Effort: openai.ReasoningEffortLow}})
	if apiStatus(t, err) != http.StatusBadRequest {
		t.Fatalf("effort on a model that does not reason: %v", err)
	}
}

func withKey(k string) option.RequestOption { return option.WithAPIKey(k) }
