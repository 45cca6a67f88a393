package anthropic_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/voxgate/voxgate/sim"
)

// Sonnet 5.5 writes the text before its tool calls inside a thinking block
// (models.md): streamed and whole, read by the SDK's own types, with a
// signature; a model that does not always think sends it as text, and
// Sonnet's final answer after the tool result is text.
func TestAnthropicSonnetThinksBetweenTools(t *testing.T) {
	_, c, _ := anthClient(t, sim.Config{Script: anthScript()})
	ask := func(model string) anthropic.MessageNewParams {
		return anthropic.MessageNewParams{Model: model, MaxTokens: 200, Tools: []anthropic.ToolUnionParam{anthWeather},
			Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("what's the weather?"))}}
	}
	streamed, types, err := stream(t, c, ask("claude-sonnet-5-5"))
	if err != nil {
		t.Fatal(err)
	}
	whole, err := c.Messages.New(t.Context(), ask("claude-sonnet-5-5-20261001"))
	if err != nil {
		t.Fatal(err)
	}
	for name, msg := range map[string]*anthropic.Message{"streamed": &streamed, "whole": whole} {
		if len(msg.Content) != 2 || msg.Content[0].Type != "thinking" || msg.Content[0].Thinking != "Let me check." ||
			msg.Content[0].Signature == "" || msg.Content[1].Type != "tool_use" {
			t.Fatalf("%s: content %+v; want the text as a signed thinking block, then the tool call", name, msg.Content)
		}
	}
	if !strings.Contains(strings.Join(types, " "), "content_block_delta content_block_stop") {
		t.Errorf("events %v", types)
	}

	older, err := c.Messages.New(t.Context(), ask("claude-haiku-5-5"))
	if err != nil {
		t.Fatal(err)
	}
	if older.Content[0].Type != "text" || older.Content[0].Text != "Let me check." {
		t.Fatalf("claude-haiku-5-5: %+v; want a text block", older.Content)
	}

	// The tool loop gives the block back to the model that wrote it.
	p := ask("claude-sonnet-5-5")
	p.Messages = append(p.Messages, streamed.ToParam(),
		anthropic.NewUserMessage(anthropic.NewToolResultBlock(streamed.Content[1].ID, `{"sky":"clear"}`, false)))
	answer, err := c.Messages.New(t.Context(), p)
	if err != nil {
		t.Fatal(err)
	}
	if answer.Content[0].Type != "text" || answer.Content[0].Text != "It is sunny (get_weather)." {
		t.Fatalf("the answer %+v", answer.Content)
	}
}

// A thinking block is bound to the model that wrote it: replayed into
// another model (a failover that kept the history's blocks) it is a 400
// the SDK raises as an invalid request; the same family's snapshot takes
// it.
func TestAnthropicThinkingBlockBoundToItsModel(t *testing.T) {
	_, c, _ := anthClient(t, sim.Config{Script: anthScript()})
	first, err := c.Messages.New(t.Context(), anthropic.MessageNewParams{Model: "claude-sonnet-5-5", MaxTokens: 200,
		Tools:    []anthropic.ToolUnionParam{anthWeather},
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("what's the weather?"))}})
	if err != nil {
		t.Fatal(err)
	}
	history := []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("what's the weather?")), first.ToParam(),
		anthropic.NewUserMessage(anthropic.NewToolResultBlock(first.Content[1].ID, `{"sky":"clear"}`, false))}
	replay := func(model string) error {
		_, err := c.Messages.New(t.Context(), anthropic.MessageNewParams{Model: model, MaxTokens: 200,
			Tools: []anthropic.ToolUnionParam{anthWeather}, Messages: history})
		return err
	}
	var ae *anthropic.Error
	if err := replay("claude-haiku-5-5"); !errors.As(err, &ae) || ae.StatusCode != http.StatusBadRequest ||
		!strings.Contains(ae.Error(), "Invalid `signature` in `thinking` block") {
		t.Fatalf("another model given the block: %v; want the API's 400", err)
	}
	if err := replay("claude-sonnet-5-5-20261001"); err != nil {
		t.Fatalf("the family's snapshot given the block: %v", err)
	}
}
