package llm

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"
)

// Causes of the upstream context's end that are not the caller's.
var (
	errTimedOut = errors.New("no event within the timeout")
	errClosing  = errors.New("stream closed")
)

// openaiStream turns Chat Completion chunks into Events. Text deltas go out
// as they come; each piece of a tool call goes out as an EventToolCallDelta
// (so the router sees the commit point), and the calls, assembled by index,
// go out whole when the finish reason arrives; EventDone follows the usage
// chunk and the end of the stream.
type openaiStream struct {
	provider string
	caller   context.Context // Stream's ctx: its end is the caller's own
	upstream context.Context // the HTTP request's
	cancel   context.CancelCauseFunc
	timeout  time.Duration
	// timer cancels upstream with errTimedOut; it runs only while we wait
	// on the provider, so a caller slow to ask for events is not taken for
	// a provider slow to send them.
	timer *time.Timer

	mu      sync.Mutex // one reader at a time; Close waits for it
	sse     *ssestream.Stream[openai.ChatCompletionChunk]
	pending []Event
	calls   map[int64]*ToolCall
	finish  string
	usage   *Usage
	model   string
	err     error // sticky: returned by every later Next
	eof     bool  // EventDone was returned
	closed  bool
}

// first waits for the first chunk, under the timer Stream started.
func (s *openaiStream) first() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	ok := s.sse.Next()
	s.timer.Stop()
	if !ok {
		if err := s.sse.Err(); err != nil {
			return s.classify(s.caller, err)
		}
		return s.invalid(errors.New("the stream ended before its first chunk"))
	}
	return s.take(s.sse.Current())
}

// Next returns the next event. Ending ctx while Next waits cancels the call
// and returns ctx's error; so does ending the ctx Stream was given.
func (s *openaiStream) Next(ctx context.Context) (Event, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for {
		switch {
		case s.closed:
			return Event{}, ErrClosed
		case len(s.pending) > 0:
			// Events read before a failure still go out first: the text a
			// content filter stopped was already generated.
			ev := s.pending[0]
			s.pending = s.pending[1:]
			s.eof = ev.Kind == EventDone
			return ev, nil
		case s.err != nil:
			return Event{}, s.err
		case s.eof:
			return Event{}, io.EOF
		}
		if err := ctx.Err(); err != nil {
			return Event{}, err
		}
		if err := s.read(ctx); err != nil {
			s.err = err
			s.cancel(errClosing)
			if ctx.Err() != nil {
				return Event{}, err
			}
		}
	}
}

// read consumes one chunk (or the end of the stream) into pending.
func (s *openaiStream) read(ctx context.Context) error {
	stop := context.AfterFunc(ctx, func() { s.cancel(context.Cause(ctx)) })
	s.timer.Reset(s.timeout)
	ok := s.sse.Next()
	s.timer.Stop()
	if !stop() {
		// ctx ended while we read, and cancelled the call.
		return ctx.Err()
	}
	if ok {
		return s.take(s.sse.Current())
	}
	if err := s.sse.Err(); err != nil {
		return s.classify(s.caller, err)
	}
	return s.end()
}

// take reads one chunk.
func (s *openaiStream) take(c openai.ChatCompletionChunk) error {
	if c.Model != "" {
		s.model = c.Model
	}
	if c.JSON.Usage.Valid() {
		s.usage = &Usage{
			InputTokens: c.Usage.PromptTokens,
			// OpenAI counts cached tokens inside prompt_tokens already.
			CachedInputTokens:     c.Usage.PromptTokensDetails.CachedTokens,
			CacheWriteInputTokens: c.Usage.PromptTokensDetails.CacheWriteTokens,
			OutputTokens:          c.Usage.CompletionTokens,
		}
	}
	for _, ch := range c.Choices {
		if ch.Index != 0 { // one choice is asked for; ignore any other
			continue
		}
		if s.finish != "" && (ch.Delta.Content != "" || len(ch.Delta.ToolCalls) > 0) {
			return s.invalid(errors.New("content after the finish reason"))
		}
		if ch.Delta.Content != "" {
			s.pending = append(s.pending, Event{Kind: EventText, Text: ch.Delta.Content})
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
func (s *openaiStream) addCallDelta(d openai.ChatCompletionChunkChoiceDeltaToolCall) {
	if s.calls == nil {
		s.calls = map[int64]*ToolCall{}
	}
	piece := &ToolCall{Name: d.Function.Name, Arguments: d.Function.Arguments}
	tc := s.calls[d.Index]
	if tc == nil {
		tc = &ToolCall{ID: NewCallID()}
		s.calls[d.Index] = tc
		piece.ID = tc.ID
	}
	// The name comes whole in the call's first delta; arguments come in
	// pieces.
	tc.Name += d.Function.Name
	tc.Arguments += d.Function.Arguments
	s.pending = append(s.pending, Event{Kind: EventToolCallDelta, Index: int(d.Index), ToolCall: piece})
}

// finished records the finish reason and releases the assembled tool calls
// in index order.
func (s *openaiStream) finished(reason string) error {
	s.finish = reason
	if reason == FinishContentFilter {
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
			return s.invalid(fmt.Errorf("tool call at index %d has no name", i))
		}
		s.pending = append(s.pending, Event{Kind: EventToolCall, ToolCall: tc})
	}
	s.calls = nil
	return nil
}

// end handles a stream that ended without a transport error. Only one that
// carried its finish reason and the usage asked for is whole; anything
// else was cut short.
func (s *openaiStream) end() error {
	if s.finish == FinishContentFilter {
		var u *Usage
		if s.usage != nil {
			cp := *s.usage
			cp.Model = s.model
			u = &cp
		}
		return &Error{Provider: s.provider, Code: ProviderContentFilter, Usage: u,
			Err: errors.New("the provider's content filter stopped the answer")}
	}
	switch {
	case s.finish == "":
		return s.invalid(errors.New("the stream ended without a finish reason"))
	case s.usage == nil:
		return s.invalid(errors.New("the stream ended without usage"))
	}
	// The body was read to its end; release the request's context too.
	s.cancel(errClosing)
	u := *s.usage
	u.Model = s.model
	s.pending = append(s.pending, Event{Kind: EventDone, Usage: &u, FinishReason: s.finish})
	return nil
}

func (s *openaiStream) invalid(err error) error {
	return &Error{Provider: s.provider, Code: ProviderInvalidResponse, Err: err}
}

// Close cancels the call if it is still running and releases the
// connection. It returns once any Next in progress has returned.
func (s *openaiStream) Close() error {
	s.cancel(errClosing)
	s.timer.Stop()
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.closed = true
		_ = s.sse.Close()
	}
	return nil
}
