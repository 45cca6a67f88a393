package sim_test

import (
	"encoding/json"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"
	"github.com/voxgate/voxgate/internal/testkit"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// These tests drive the simulator with the real openai-go client, the one
// the gateway uses against the real API.

func recipeTools() []openai.ChatCompletionToolUnionParam {
	return []openai.ChatCompletionToolUnionParam{
		openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name:        "search_recipes",
			Description: openai.String("Search recipes by keywords."),
			Parameters: shared.FunctionParameters{
				"type":       "object",
				"properties": map[string]any{"query": map[string]any{"type": "string"}},
				"required":   []string{"query"},
			},
		}),
		openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name:        "log_meal",
			Description: openai.String("Log a meal the user ate."),
			Parameters: shared.FunctionParameters{
				"type": "object",
				"properties": map[string]any{
					"description": map[string]any{"type": "string"},
					"meal_type":   map[string]any{"type": "string", "enum": []string{"breakfast", "lunch", "dinner", "snack"}},
				},
				"required": []string{"description", "meal_type"},
			},
		}),
	}
}

func TestOpenAINonStreaming(t *testing.T) {
	t.Parallel()
	_, url := testkit.NewSim(t, sim.Config{Script: sim.Script{Text: "Hello, world!"}}) // 13 bytes
	client := simtest.Client(url)
	got, err := client.Chat.Completions.New(t.Context(), openai.ChatCompletionNewParams{
		Model:    openai.ChatModelGPT4o,
		Messages: []openai.ChatCompletionMessageParamUnion{openai.SystemMessage("Be brief."), openai.UserMessage("hello")},
	})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if len(got.Choices) != 1 {
		t.Fatalf("choices: got %d, want 1", len(got.Choices))
	}
	ch := got.Choices[0]
	// The alias is answered by its dated snapshot, as the real API does.
	if ch.Message.Content != "Hello, world!" || ch.FinishReason != "stop" || got.Model != "gpt-4o-2024-08-06" || got.Object != "chat.completion" {
		t.Errorf("got content %q finish %q model %q object %q, want %q stop gpt-4o-2024-08-06 chat.completion",
			ch.Message.Content, ch.FinishReason, got.Model, got.Object, "Hello, world!")
	}
	// "Be brief." (9) + "hello" (5) = 14 bytes -> 4 tokens; 13 bytes -> 4 tokens.
	if u := got.Usage; u.PromptTokens != 4 || u.CompletionTokens != 4 || u.TotalTokens != 8 {
		t.Errorf("usage: got %d+%d=%d, want 4+4=8", u.PromptTokens, u.CompletionTokens, u.TotalTokens)
	}
}

// TestOpenAIToolLoop runs the whole loop a gateway runs: stream a tool call
// through ChatCompletionAccumulator, send the result back, stream the answer
// with usage.
func TestOpenAIToolLoop(t *testing.T) {
	t.Parallel()
	_, url := testkit.NewSim(t, sim.Config{})
	client := simtest.Client(url)
	params := openai.ChatCompletionNewParams{
		Model:         openai.ChatModelGPT4o,
		Messages:      []openai.ChatCompletionMessageParamUnion{openai.UserMessage("find me a pasta recipe")},
		Tools:         recipeTools(),
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	}

	acc, finished := streamAll(t, client, params)
	if len(finished) != 1 {
		t.Fatalf("finished tool calls: got %d, want 1", len(finished))
	}
	call := finished[0]
	var args struct{ Query string }
	if err := json.Unmarshal([]byte(call.Arguments), &args); err != nil {
		t.Fatalf("arguments %q: %v", call.Arguments, err)
	}
	if call.Name != "search_recipes" || args.Query != "pasta" || call.ID == "" {
		t.Errorf("tool call: got %s(%s) id %q, want search_recipes({\"query\":\"pasta\"}) with an id", call.Name, call.Arguments, call.ID)
	}
	if fr := acc.Choices[0].FinishReason; fr != "tool_calls" {
		t.Errorf("finish reason: got %q, want tool_calls", fr)
	}
	if acc.Usage.CompletionTokens == 0 || acc.Usage.PromptTokens == 0 {
		t.Errorf("usage: got %+v, want counts", acc.Usage)
	}

	params.Messages = append(params.Messages, acc.Choices[0].Message.ToParam(),
		openai.ToolMessage(`[{"title":"Pasta al pomodoro"}]`, call.ID))
	acc, finished = streamAll(t, client, params)
	if len(finished) != 0 {
		t.Errorf("second turn tool calls: got %d, want 0", len(finished))
	}
	msg := acc.Choices[0].Message
	if msg.Content == "" || acc.Choices[0].FinishReason != "stop" {
		t.Errorf("answer: got %q finish %q, want text and stop", msg.Content, acc.Choices[0].FinishReason)
	}
	if want := int64((len(msg.Content) + 3) / 4); acc.Usage.CompletionTokens != want {
		t.Errorf("completion tokens: got %d, want %d", acc.Usage.CompletionTokens, want)
	}
}

// TestOpenAISeveralToolCalls checks that scripted parallel calls stream with
// their own index and each one finishes in order.
func TestOpenAISeveralToolCalls(t *testing.T) {
	t.Parallel()
	_, url := testkit.NewSim(t, sim.Config{Script: sim.Script{Rules: []sim.Rule{{
		When: sim.When{ToolsOffered: []string{"search_recipes", "log_meal"}},
		Reply: sim.Reply{ToolCalls: []sim.ScriptCall{
			{Name: "log_meal", Arguments: map[string]any{"description": "oatmeal", "meal_type": "breakfast"}},
			{Name: "search_recipes", Arguments: `{"query":"oatmeal"}`},
		}},
	}}}})
	client := simtest.Client(url)
	acc, finished := streamAll(t, client, openai.ChatCompletionNewParams{
		Model:    openai.ChatModelGPT4o,
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("log it and find more")},
		Tools:    recipeTools(),
	})
	want := []struct{ name, args string }{
		{"log_meal", `{"description":"oatmeal","meal_type":"breakfast"}`},
		{"search_recipes", `{"query":"oatmeal"}`},
	}
	if len(finished) != len(want) {
		t.Fatalf("finished calls: got %d, want %d", len(finished), len(want))
	}
	for i, w := range want {
		if got := finished[i]; got.Index != i || got.Name != w.name || got.Arguments != w.args {
			t.Errorf("call %d: got #%d %s(%s), want #%d %s(%s)", i, got.Index, got.Name, got.Arguments, i, w.name, w.args)
		}
	}
	if n := len(acc.Choices[0].Message.ToolCalls); n != 2 {
		t.Errorf("accumulated tool calls: got %d, want 2", n)
	}
}

// streamAll streams a completion through an accumulator and returns it with
// the tool calls reported by JustFinishedToolCall, in order.
func streamAll(t *testing.T, client openai.Client, params openai.ChatCompletionNewParams) (openai.ChatCompletionAccumulator, []openai.FinishedChatCompletionToolCall) {
	t.Helper()
	stream := client.Chat.Completions.NewStreaming(t.Context(), params)
	defer stream.Close()
	var acc openai.ChatCompletionAccumulator
	var finished []openai.FinishedChatCompletionToolCall
	for stream.Next() {
		if !acc.AddChunk(stream.Current()) {
			t.Fatalf("AddChunk rejected %s", stream.Current().RawJSON())
		}
		if tc, ok := acc.JustFinishedToolCall(); ok {
			finished = append(finished, tc)
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatalf("stream: %v", err)
	}
	return acc, finished
}
