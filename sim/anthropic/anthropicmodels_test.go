package anthropic_test

import (
	"errors"
	"net/http"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/voxgate/voxgate/sim"
)

// Sonnet 5.5 (and its dated snapshots) answers a forced tool choice with
// 400 invalid_request_error, streamed or not, before any event; auto and
// none are served, and other models take a forced choice.
func TestAnthropicSonnetRefusesForcedToolUse(t *testing.T) {
	s, c, _ := anthClient(t, sim.Config{Script: anthScript()})
	params := func(model string, choice anthropic.ToolChoiceUnionParam) anthropic.MessageNewParams {
		return anthropic.MessageNewParams{Model: model, MaxTokens: 100, Tools: []anthropic.ToolUnionParam{anthWeather},
			ToolChoice: choice, Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("weather?"))}}
	}
	anyTool := anthropic.ToolChoiceUnionParam{OfAny: &anthropic.ToolChoiceAnyParam{}}
	named := anthropic.ToolChoiceUnionParam{OfTool: &anthropic.ToolChoiceToolParam{Name: "get_weather"}}
	auto := anthropic.ToolChoiceUnionParam{OfAuto: &anthropic.ToolChoiceAutoParam{}}
	none := anthropic.ToolChoiceUnionParam{OfNone: &anthropic.ToolChoiceNoneParam{}}
	refused := func(t *testing.T, err error) {
		t.Helper()
		var apiErr *anthropic.Error
		if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusBadRequest || apiErr.Type() != anthropic.ErrorTypeInvalidRequestError {
			t.Fatalf("got %v, want 400 invalid_request_error", err)
		}
	}
	for _, model := range []string{"claude-sonnet-5-5", "claude-sonnet-5-5-20261001"} {
		for _, choice := range []anthropic.ToolChoiceUnionParam{anyTool, named} {
			_, err := c.Messages.New(t.Context(), params(model, choice))
			refused(t, err)
			_, types, err := stream(t, c, params(model, choice))
			refused(t, err)
			if len(types) != 0 {
				t.Errorf("%s streamed: events %v before the refusal, want none", model, types)
			}
		}
	}
	before := s.Stats().Endpoints[sim.EndpointAnthropicMessages].Requests
	for _, choice := range []anthropic.ToolChoiceUnionParam{auto, none} {
		if _, err := c.Messages.New(t.Context(), params("claude-sonnet-5-5", choice)); err != nil {
			t.Errorf("Sonnet 5.5 with a choice that does not force: %v", err)
		}
	}
	msg, err := c.Messages.New(t.Context(), params("claude-haiku-5-5", anyTool))
	if err != nil || msg.StopReason != anthropic.StopReasonToolUse {
		t.Errorf("Haiku 5.5 with tool_choice any: %+v, %v, want a tool_use stop", msg, err)
	}
	if got := s.Stats().Endpoints[sim.EndpointAnthropicMessages].Requests - before; got != 3 {
		t.Errorf("requests served: %d, want 3", got)
	}
}

// Sonnet 5.5 always thinks: thinking {"type": "disabled"} is a 400
// invalid_request_error for it and its snapshots, streamed or not; other
// models take it, and Sonnet 5.5 takes a request that leaves thinking out.
func TestAnthropicSonnetRefusesThinkingDisabled(t *testing.T) {
	_, c, _ := anthClient(t, sim.Config{Script: anthScript()})
	params := func(model string, thinking *anthropic.ThinkingConfigParamUnion) anthropic.MessageNewParams {
		p := anthropic.MessageNewParams{Model: model, MaxTokens: 100,
			Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hello"))}}
		if thinking != nil {
			p.Thinking = *thinking
		}
		return p
	}
	disabled := &anthropic.ThinkingConfigParamUnion{OfDisabled: &anthropic.ThinkingConfigDisabledParam{}}
	for _, model := range []string{"claude-sonnet-5-5", "claude-sonnet-5-5-20261001"} {
		_, err := c.Messages.New(t.Context(), params(model, disabled))
		var apiErr *anthropic.Error
		if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusBadRequest || apiErr.Type() != anthropic.ErrorTypeInvalidRequestError {
			t.Fatalf("%s with thinking disabled: got %v, want 400 invalid_request_error", model, err)
		}
		_, types, err := stream(t, c, params(model, disabled))
		if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusBadRequest || len(types) != 0 {
			t.Fatalf("%s streamed with thinking disabled: %v after events %v, want a 400 before any", model, err, types)
		}
	}
	if _, err := c.Messages.New(t.Context(), params("claude-sonnet-5-5", nil)); err != nil {
		t.Errorf("Sonnet 5.5 without a thinking setting: %v", err)
	}
	if _, err := c.Messages.New(t.Context(), params("claude-haiku-5-5", disabled)); err != nil {
		t.Errorf("Haiku 5.5 with thinking disabled: %v", err)
	}
}
