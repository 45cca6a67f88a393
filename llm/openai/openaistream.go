package openai

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/llm/adapt"
)

// openaiDecoder turns Chat Completion chunks into Events. Text deltas go
// out as they come; each piece of a tool call goes out as an
// EventToolCallDelta (so the router sees the commit point), and the calls,
// assembled by index, go out whole when the finish reason arrives;
// EventDone follows the usage chunk and the end of the stream.
type openaiDecoder struct {
	*adapt.Emitter
	sse    *ssestream.Stream[chatChunk]
	aside  ssestream.Decoder // a *setAside, or nil for none
	calls  map[int64]*llm.ToolCall
	finish string
	usage  *llm.Usage
	model  string
	// ttl is the prompt cache TTL the request asked (Request.PromptCacheTTL):
	// the usage does not say which TTL its cache writes were made under,
	// so they are reported under the one asked.
	ttl string
	// tier is the service tier the chunks name: the one that served the
	// call, which may differ from the one asked.
	tier string
}

func (s *openaiDecoder) Next() (bool, error) {
	if s.sse.Next() {
		return true, nil
	}
	return false, s.sse.Err()
}

func (s *openaiDecoder) Take() error {
	s.skipped()
	return s.chunk(s.sse.Current())
}

// skipped emits an EventSkipped for each unreadable chunk set aside before
// the one just read (or the end), for the router to count.
func (s *openaiDecoder) skipped() {
	if d, ok := s.aside.(*setAside); ok {
		for n := d.take(); n > 0; n-- {
			s.Emit(llm.Event{Kind: llm.EventSkipped})
		}
	}
}

func (s *openaiDecoder) Classify(err error) *llm.Error {
	if errors.Is(err, llm.ErrUnreadableChunk) {
		return s.Invalid(err).(*llm.Error)
	}
	return classifyOpenAI(s.Provider, err)
}

func (s *openaiDecoder) Close() { _ = s.sse.Close() }

// reported is the usage chunk's, which OpenAI sends last, after the
// finish reason.
func (s *openaiDecoder) Reported() *llm.Usage { return adapt.WithModel(s.usage, s.model) }

// chatChunk is the part of a Chat Completions chunk the decoder reads,
// decoded with encoding/json. The SDK's own chunk type keeps every field
// with its presence metadata, and decoding it was a fifth of the gateway's
// CPU on a streamed completion (docs/capacity.md); the SDK still reads the
// stream (its SSE framing, [DONE], and an in-stream error object).
type chatChunk struct {
	Model       string       `json:"model"`
	ServiceTier string       `json:"service_tier"`
	Choices     []chatChoice `json:"choices"`
	Usage       *chatUsage   `json:"usage"`
}

// chatChoice is a chunk's choice: its delta and, last, its finish reason.
type chatChoice struct {
	Index        int64     `json:"index"`
	Delta        chatDelta `json:"delta"`
	FinishReason string    `json:"finish_reason"`
}

// chatDelta is what a chunk adds to the answer.
type chatDelta struct {
	Content   string              `json:"content"`
	ToolCalls []chatChunkToolCall `json:"tool_calls"`
}

// chatUsage is a call's usage, streamed or whole.
type chatUsage struct {
	PromptTokens        int64 `json:"prompt_tokens"`
	CompletionTokens    int64 `json:"completion_tokens"`
	PromptTokensDetails struct {
		CachedTokens     int64 `json:"cached_tokens"`
		CacheWriteTokens int64 `json:"cache_write_tokens"`
	} `json:"prompt_tokens_details"`
}

// chatChunkToolCall is one piece of a streamed tool call.
type chatChunkToolCall struct {
	Index    int64 `json:"index"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// chunk reads one chunk.
func (s *openaiDecoder) chunk(c chatChunk) error {
	if c.Model != "" {
		s.model = c.Model
	}
	if c.ServiceTier != "" {
		s.tier = c.ServiceTier
	}
	if c.Usage != nil {
		s.usage = &llm.Usage{
			InputTokens: c.Usage.PromptTokens,
			// OpenAI counts cached tokens inside prompt_tokens already.
			CachedInputTokens:     c.Usage.PromptTokensDetails.CachedTokens,
			CacheWriteInputTokens: c.Usage.PromptTokensDetails.CacheWriteTokens,
			OutputTokens:          c.Usage.CompletionTokens,
		}
		if s.ttl == llm.CacheTTL12h {
			s.usage.CacheWrite12hInputTokens = s.usage.CacheWriteInputTokens
		}
	}
	if s.usage != nil {
		s.usage.ServiceTier = s.tier
	}
	for _, ch := range c.Choices {
		if ch.Index != 0 { // one choice is asked for; ignore any other
			continue
		}
		if s.finish != "" && (ch.Delta.Content != "" || len(ch.Delta.ToolCalls) > 0) {
			return s.Invalid(errors.New("content after the finish reason"))
		}
		if ch.Delta.Content != "" {
			s.Emit(llm.Event{Kind: llm.EventText, Text: ch.Delta.Content})
		}
		for _, d := range ch.Delta.ToolCalls {
			s.addCallDelta(d)
		}
		if ch.FinishReason != "" {
			if err := s.finished(ch.FinishReason); err != nil {
				return err
			}
		}
	}
	return nil
}

// addCallDelta assembles a call by its index and passes the piece on. The
// call's id is minted here, at its first piece, and the provider's own is
// dropped: it is unique only within one response and other providers may
// refuse its form when the history moves to them (DESIGN §11).
func (s *openaiDecoder) addCallDelta(d chatChunkToolCall) {
	if s.calls == nil {
		s.calls = map[int64]*llm.ToolCall{}
	}
	piece := &llm.ToolCall{Name: d.Function.Name, Arguments: d.Function.Arguments}
	tc := s.calls[d.Index]
	if tc == nil {
		tc = &llm.ToolCall{ID: llm.NewCallID()}
		s.calls[d.Index] = tc
		piece.ID = tc.ID
	}
	// The name comes whole in the call's first delta; arguments come in
	// pieces.
	tc.Name += d.Function.Name
	tc.Arguments += d.Function.Arguments
	s.Emit(llm.Event{Kind: llm.EventToolCallDelta, Index: int(d.Index), ToolCall: piece})
}

// finished records the finish reason and releases the assembled tool calls
// in index order.
func (s *openaiDecoder) finished(reason string) error {
	s.finish = reason
	if reason == llm.FinishContentFilter {
		// The refusal is returned at the end of the stream (end), with the
		// usage that follows it: the stopped answer may still be billed.
		s.calls = nil
		return nil
	}
	idx := make([]int64, 0, len(s.calls))
	for i := range s.calls {
		idx = append(idx, i)
	}
	slices.SortFunc(idx, cmp.Compare[int64])
	for _, i := range idx {
		tc := s.calls[i]
		if tc.Name == "" {
			return s.Invalid(fmt.Errorf("tool call at index %d has no name", i))
		}
		s.Emit(llm.Event{Kind: llm.EventToolCall, ToolCall: tc})
	}
	s.calls = nil
	return nil
}

// end handles a stream that ended without a transport error: a content
// filter's stop is a refusal, anything else whole only with its finish
// reason and the usage asked for (emitter.done).
func (s *openaiDecoder) End() error {
	s.skipped()
	if s.finish == llm.FinishContentFilter {
		// The usage that followed the stop is the stopped answer's.
		return s.Refused(errors.New("the provider's content filter stopped the answer"), adapt.WithModel(s.usage, s.model))
	}
	return s.Done(s.finish, s.usage, s.model)
}
