package openai

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/llm/adapt"
)

// respDecoder turns the Responses API's typed events into the same Events
// the chat decoder makes: text deltas as they come; a function call's
// first piece (its minted id and name) when its item is added and each
// arguments delta after, then every call whole at the end; EventDone
// with the usage and a finish reason from response.completed or
// .incomplete. An error event or response.failed is the call's failure,
// classified as the chat stream's in-stream error is. Reasoning items
// that end before a call are put on it (reasoning.go).
type respDecoder struct {
	*adapt.Emitter
	sse   *ssestream.Stream[respEvent]
	scope string
	ttl   string // as openaiDecoder.ttl
	calls []*llm.ToolCall
	// byItem finds a call by its item's output_index.
	byItem    map[int]int
	reasoning []reasoningItem // ended, not yet put on a call
	finish    string
	usage     *llm.Usage
	model     string
}

// respEvent is the part of a stream event the decoder reads, decoded with
// encoding/json as chatChunk is. The same shape carries a whole
// response's output (respWhole).
type respEvent struct {
	Type        string      `json:"type"`
	OutputIndex int         `json:"output_index"`
	Delta       string      `json:"delta"`
	Arguments   *string     `json:"arguments"`
	Item        *respItem   `json:"item"`
	Response    *respObject `json:"response"`
	// Code and Message are an error event's.
	Code    string `json:"code"`
	Message string `json:"message"`
}

// respItem is an output item: a message, a function call or reasoning.
type respItem struct {
	ID               string `json:"id"`
	Type             string `json:"type"`
	Name             string `json:"name"`
	Arguments        string `json:"arguments"`
	EncryptedContent string `json:"encrypted_content"`
	Content          []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
}

// respObject is the Response as the last event (or a whole answer) has it.
type respObject struct {
	Model             string `json:"model"`
	ServiceTier       string `json:"service_tier"`
	Status            string `json:"status"`
	IncompleteDetails *struct {
		Reason string `json:"reason"`
	} `json:"incomplete_details"`
	Error *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	Output []respItem `json:"output"`
	Usage  *respUsage `json:"usage"`
}

// respUsage is a Response's usage: output_tokens counts the reasoning
// tokens too (output_tokens_details.reasoning_tokens), as the chat
// usage's completion_tokens does.
type respUsage struct {
	InputTokens        int64 `json:"input_tokens"`
	OutputTokens       int64 `json:"output_tokens"`
	InputTokensDetails struct {
		CachedTokens     int64 `json:"cached_tokens"`
		CacheWriteTokens int64 `json:"cache_write_tokens"`
	} `json:"input_tokens_details"`
}

func (s *respDecoder) Next() (bool, error) {
	if s.sse.Next() {
		return true, nil
	}
	return false, s.sse.Err()
}

func (s *respDecoder) Take() error { return s.event(s.sse.Current()) }

func (s *respDecoder) Classify(err error) *llm.Error { return classifyOpenAI(s.Provider, err) }

func (s *respDecoder) Close() { _ = s.sse.Close() }

func (s *respDecoder) Reported() *llm.Usage { return adapt.WithModel(s.usage, s.model) }

// event reads one event; the types it does not name carry nothing the
// seam has (content_part, output_text.done, in_progress, …).
func (s *respDecoder) event(e respEvent) error {
	if s.finish != "" {
		return s.Invalid(fmt.Errorf("%s after the response ended", e.Type))
	}
	switch e.Type {
	case "response.created":
		if e.Response != nil {
			s.model = e.Response.Model
		}
	case "response.output_text.delta":
		if e.Delta != "" {
			s.Emit(llm.Event{Kind: llm.EventText, Text: e.Delta})
		}
	case "response.output_item.added":
		if e.Item != nil && e.Item.Type == "function_call" {
			return s.callAdded(e.OutputIndex, e.Item)
		}
	case "response.function_call_arguments.delta":
		i, ok := s.byItem[e.OutputIndex]
		if !ok {
			return s.Invalid(fmt.Errorf("arguments for output %d, which is no function call", e.OutputIndex))
		}
		s.calls[i].Arguments += e.Delta
		s.Emit(llm.Event{Kind: llm.EventToolCallDelta, Index: i, ToolCall: &llm.ToolCall{Arguments: e.Delta}})
	case "response.function_call_arguments.done":
		if i, ok := s.byItem[e.OutputIndex]; ok && e.Arguments != nil {
			s.calls[i].Arguments = *e.Arguments
		}
	case "response.output_item.done":
		// The reasoning's encrypted_content is whole only here (the
		// spec's ResponseOutputItemAddedEvent).
		if e.Item != nil && e.Item.Type == "reasoning" && e.Item.EncryptedContent != "" {
			s.reasoning = append(s.reasoning, reasoningItem{ID: e.Item.ID, EncryptedContent: e.Item.EncryptedContent})
		}
	case "response.completed", "response.incomplete":
		return s.ended(e.Response)
	case "response.failed":
		code, msg := "", "the response failed"
		if e.Response != nil && e.Response.Error != nil {
			code, msg = e.Response.Error.Code, e.Response.Error.Message
		}
		return s.Classify(inStreamError(e.Type, code, msg))
	case "error":
		return s.Classify(inStreamError(e.Type, e.Code, e.Message))
	}
	return nil
}

// callAdded starts a call: its id is minted here, as the chat decoder's
// (the provider's call_id is unique only within one response), and the
// reasoning that ended before it is put on it.
func (s *respDecoder) callAdded(at int, it *respItem) error {
	if it.Name == "" {
		return s.Invalid(fmt.Errorf("function call at output %d has no name", at))
	}
	if s.byItem == nil {
		s.byItem = map[int]int{}
	}
	if _, dup := s.byItem[at]; dup {
		return s.Invalid(fmt.Errorf("output %d added twice", at))
	}
	tc := &llm.ToolCall{ID: llm.NewCallID(), Name: it.Name, Arguments: it.Arguments}
	if len(s.reasoning) > 0 {
		sign(tc, s.scope, s.reasoning)
		s.reasoning = nil
	}
	i := len(s.calls)
	s.byItem[at] = i
	s.calls = append(s.calls, tc)
	s.Emit(llm.Event{Kind: llm.EventToolCallDelta, Index: i,
		ToolCall: &llm.ToolCall{ID: tc.ID, Name: tc.Name, Arguments: it.Arguments}})
	return nil
}

// ended reads the final response: usage, the model, the tier, and the
// finish reason (tool_calls when it called; length when its budget ran
// out; content_filter when the safety system stopped it).
func (s *respDecoder) ended(r *respObject) error {
	if r == nil {
		return s.Invalid(errors.New("the final event carries no response"))
	}
	if r.Model != "" {
		s.model = r.Model
	}
	if u := r.Usage; u != nil {
		s.usage = &llm.Usage{InputTokens: u.InputTokens, CachedInputTokens: u.InputTokensDetails.CachedTokens,
			CacheWriteInputTokens: u.InputTokensDetails.CacheWriteTokens, OutputTokens: u.OutputTokens, ServiceTier: r.ServiceTier}
		if s.ttl == llm.CacheTTL12h {
			s.usage.CacheWrite12hInputTokens = s.usage.CacheWriteInputTokens
		}
	}
	switch {
	case r.Status == "incomplete" && r.IncompleteDetails != nil && r.IncompleteDetails.Reason == "content_filter":
		s.finish, s.calls = llm.FinishContentFilter, nil
		return nil
	case r.Status == "incomplete":
		s.finish = llm.FinishLength
	case r.Status != "completed":
		return s.Invalid(fmt.Errorf("the response ended %q", r.Status))
	case len(s.calls) > 0:
		s.finish = llm.FinishToolCalls
	default:
		s.finish = llm.FinishStop
	}
	for _, tc := range s.calls {
		s.Emit(llm.Event{Kind: llm.EventToolCall, ToolCall: tc})
	}
	s.calls = nil
	return nil
}

// End is the body's end: whole only after the final event, with usage.
func (s *respDecoder) End() error {
	if s.finish == llm.FinishContentFilter {
		return s.Refused(errors.New("the provider's content filter stopped the answer"), adapt.WithModel(s.usage, s.model))
	}
	return s.Done(s.finish, s.usage, s.model)
}

// inStreamError is an error event or a failed response as the chat
// stream's in-stream error is, so the one classifier reads both.
func inStreamError(typ, code, message string) error {
	data, _ := json.Marshal(map[string]any{"error": map[string]string{"code": code, "message": message}})
	return &ssestream.StreamError{Message: fmt.Sprintf("%s: %s: %s", typ, code, message), Event: ssestream.Event{Type: typ, Data: data}}
}
