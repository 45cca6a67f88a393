package anthropic_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/voxgate/voxgate/sim"
)

const prefillAnswer = "Oats with berries make a good breakfast."

func prefillParams(model, partial string) anthropic.MessageNewParams {
	return anthropic.MessageNewParams{Model: model, MaxTokens: 200, Messages: []anthropic.MessageParam{
		anthropic.NewUserMessage(anthropic.NewTextBlock("what should I eat?")),
		anthropic.NewAssistantMessage(anthropic.NewTextBlock(partial))}}
}

// A model before Claude 4.6 continues a trailing assistant message: the
// answer is the rest of the text, never the prefill again, and only the
// rest is counted as output; streamed and not.
func TestAnthropicOlderModelContinuesPrefill(t *testing.T) {
	t.Parallel()
	_, c, _ := anthClient(t, sim.Config{Script: sim.Script{Text: prefillAnswer}})
	partial := "Oats with ber"
	want := "ries make a good breakfast." // by hand: the answer after the partial
	for _, model := range []string{"claude-haiku-4-5", "claude-sonnet-4-5-20250929", "claude-3-5-sonnet-20241022"} {
		msg, err := c.Messages.New(t.Context(), prefillParams(model, partial))
		if err != nil {
			t.Fatalf("%s: %v", model, err)
		}
		if len(msg.Content) != 1 || msg.Content[0].Text != want || msg.StopReason != anthropic.StopReasonEndTurn {
			t.Errorf("%s: got %+v, want the text %q", model, msg.Content, want)
		}
		if msg.Usage.OutputTokens != tokens(want) {
			t.Errorf("%s: output tokens %d, want %d (the continuation only)", model, msg.Usage.OutputTokens, tokens(want))
		}
		streamed, _, err := stream(t, c, prefillParams(model, partial))
		if err != nil || len(streamed.Content) != 1 || streamed.Content[0].Text != want {
			t.Errorf("%s streamed: got %+v, %v, want %q", model, streamed.Content, err, want)
		}
	}
}

// From Claude Opus 4.6 on, a request ending with an assistant message is a
// 400 invalid_request_error with the API's sentence, streamed or not,
// before any event; the same conversation ending with the user is served.
func TestAnthropicNewerModelRefusesPrefill(t *testing.T) {
	t.Parallel()
	_, c, _ := anthClient(t, sim.Config{Script: sim.Script{Text: prefillAnswer}})
	for _, model := range []string{"claude-opus-4-6", "claude-sonnet-4-6", "claude-haiku-5-5", "claude-sonnet-5-5-20261001", "claude-fable-5-2"} {
		_, err := c.Messages.New(t.Context(), prefillParams(model, "Oats with"))
		var apiErr *anthropic.Error
		if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusBadRequest || apiErr.Type() != anthropic.ErrorTypeInvalidRequestError ||
			!strings.Contains(apiErr.RawJSON(), "This model does not support assistant message prefill. The conversation must end with a user message.") {
			t.Errorf("%s: got %v, want the prefill refusal", model, err)
		}
		_, types, err := stream(t, c, prefillParams(model, "Oats with"))
		if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusBadRequest || len(types) != 0 {
			t.Errorf("%s streamed: events %v, err %v; want a 400 before any event", model, types, err)
		}
		msg, err := c.Messages.New(t.Context(), anthropic.MessageNewParams{Model: model, MaxTokens: 200,
			Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("what should I eat?"))}})
		if err != nil || msg.Content[0].Text != prefillAnswer {
			t.Errorf("%s without a prefill: %+v, %v", model, msg, err)
		}
	}
}

// A prefill that ends in white space is refused on a model that takes
// prefills, as the Messages API refuses it: 400 invalid_request_error
// naming the trailing whitespace.
func TestAnthropicPrefillEndingInSpaceRefused(t *testing.T) {
	t.Parallel()
	_, c, _ := anthClient(t, sim.Config{Script: sim.Script{Text: prefillAnswer}})
	for _, partial := range []string{"Oats with ", "Oats with\n"} {
		_, err := c.Messages.New(t.Context(), prefillParams("claude-haiku-4-5", partial))
		var ae *anthropic.Error
		if !errors.As(err, &ae) || ae.StatusCode != http.StatusBadRequest || !strings.Contains(ae.Error(), "trailing whitespace") {
			t.Errorf("prefill %q: got %v, want the 400 naming trailing whitespace", partial, err)
		}
	}
	if _, err := c.Messages.New(t.Context(), prefillParams("claude-haiku-4-5", "Oats with")); err != nil {
		t.Errorf("a prefill ending in a word: %v", err)
	}
}
