package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/packages/ssestream"
)

// anthStream turns Messages stream events into Events: text deltas as they
// come; each tool_use block as EventToolCallDelta pieces (the first with
// the gateway's call id and the name) and then whole at its
// content_block_stop; EventDone after message_stop (or after message_delta
// when the stream ends cleanly without message_stop), with usage in
// DESIGN §10's classes.
type anthStream struct {
	provider string
	caller   context.Context
	upstream context.Context
	cancel   context.CancelCauseFunc
	timeout  time.Duration
	timer    *time.Timer

	mu      sync.Mutex
	sse     *ssestream.Stream[anthropic.MessageStreamEventUnion]
	pending []Event
	calls   map[int64]*anthCall // open tool_use blocks by content index
	ncalls  int
	started bool // message_start came
	finish  string
	usage   Usage
	err     error
	eof     bool
	closed  bool
}

// anthCall is a tool_use block being streamed.
type anthCall struct {
	index int // the call's position among the response's calls
	call  ToolCall
}

func (s *anthStream) first() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	ok := s.sse.Next()
	s.timer.Stop()
	if !ok {
		if err := s.sse.Err(); err != nil {
			return s.classify(err)
		}
		return s.invalid(errors.New("the stream ended before its first event"))
	}
	return s.take(s.sse.Current())
}

// Next returns the next event, as openaiStream.Next does; a ctx that ended
// before the call ends the stream as one ending during it does (the
// upstream call is cancelled, the error sticks).
func (s *anthStream) Next(ctx context.Context) (Event, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for {
		switch {
		case s.closed:
			return Event{}, ErrClosed
		case len(s.pending) > 0:
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
			// Ended before Next began: the same end as during the wait,
			// whichever came first.
			s.err = err
			s.cancel(errClosing)
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

func (s *anthStream) read(ctx context.Context) error {
	stop := context.AfterFunc(ctx, func() { s.cancel(context.Cause(ctx)) })
	s.timer.Reset(s.timeout)
	ok := s.sse.Next()
	s.timer.Stop()
	if !stop() {
		return ctx.Err()
	}
	if ok {
		return s.take(s.sse.Current())
	}
	if err := s.sse.Err(); err != nil {
		return s.classify(err)
	}
	return s.end(false)
}

// take reads one event.
func (s *anthStream) take(ev anthropic.MessageStreamEventUnion) error {
	if !s.started && ev.Type != "message_start" {
		return s.invalid(fmt.Errorf("%q before message_start", ev.Type))
	}
	if s.finish != "" && ev.Type != "message_stop" {
		return s.invalid(fmt.Errorf("%q after message_delta", ev.Type))
	}
	switch ev.Type {
	case "message_start":
		if s.started {
			return s.invalid(errors.New("a second message_start"))
		}
		s.started = true
		u := ev.Message.Usage
		s.usage = Usage{Model: ev.Message.Model, OutputTokens: u.OutputTokens}
		if err := s.input(u.InputTokens, u.CacheReadInputTokens, u.CacheCreationInputTokens, u.OutputTokens); err != nil {
			return err
		}
	case "content_block_start":
		b := ev.ContentBlock
		switch b.Type {
		case "text":
			s.text(b.Text)
		case "tool_use":
			if b.Name == "" {
				return s.invalid(fmt.Errorf("tool_use block %d has no name", ev.Index))
			}
			c := &anthCall{index: s.ncalls, call: ToolCall{ID: NewCallID(), Name: b.Name}}
			s.ncalls++
			s.calls[ev.Index] = c
			s.pending = append(s.pending, Event{Kind: EventToolCallDelta, Index: c.index,
				ToolCall: &ToolCall{ID: c.call.ID, Name: c.call.Name}})
		}
		// Other blocks (thinking, server tools) carry nothing for the seam.
	case "content_block_delta":
		switch d := ev.Delta; d.Type {
		case "text_delta":
			s.text(d.Text)
		case "input_json_delta":
			c := s.calls[ev.Index]
			if c == nil {
				return s.invalid(fmt.Errorf("input_json_delta for block %d, which is no open tool_use", ev.Index))
			}
			if d.PartialJSON != "" {
				c.call.Arguments += d.PartialJSON
				s.pending = append(s.pending, Event{Kind: EventToolCallDelta, Index: c.index,
					ToolCall: &ToolCall{Arguments: d.PartialJSON}})
			}
		}
	case "content_block_stop":
		if c := s.calls[ev.Index]; c != nil {
			delete(s.calls, ev.Index)
			call := c.call
			if call.Arguments == "" {
				call.Arguments = "{}" // a call without input streams no JSON
			}
			s.pending = append(s.pending, Event{Kind: EventToolCall, ToolCall: &call})
		}
	case "message_delta":
		u := ev.Usage
		// message_delta's counts are cumulative; older API versions send
		// only output_tokens there.
		in, read, write := s.usage.InputTokens-s.usage.CachedInputTokens-s.usage.CacheWriteInputTokens,
			s.usage.CachedInputTokens, s.usage.CacheWriteInputTokens
		if u.JSON.InputTokens.Valid() {
			in, read, write = u.InputTokens, u.CacheReadInputTokens, u.CacheCreationInputTokens
		}
		if err := s.input(in, read, write, u.OutputTokens); err != nil {
			return err
		}
		s.usage.OutputTokens = u.OutputTokens
		return s.stopped(ev.Delta.StopReason)
	case "message_stop":
		return s.end(true)
	}
	return nil
}

// maxUsage bounds each count a provider reports: beyond it a count is no
// usage but garbage, which must not reach the ledger (or wrap its sums).
const maxUsage = 1 << 40

// input sets the input classes: Anthropic reports cache reads and writes
// apart from input_tokens, DESIGN §10 counts them inside it.
func (s *anthStream) input(uncached, read, write, output int64) error {
	for _, n := range []int64{uncached, read, write, output} {
		if n < 0 || n >= maxUsage {
			return s.invalid(fmt.Errorf("usage count %d out of range", n))
		}
	}
	s.usage.InputTokens = uncached + read + write
	s.usage.CachedInputTokens = read
	s.usage.CacheWriteInputTokens = write
	return nil
}

func (s *anthStream) text(t string) {
	if t != "" {
		s.pending = append(s.pending, Event{Kind: EventText, Text: t})
	}
}

// stopped maps the stop reason. A refusal is the provider's safety
// decision: a content-filter failure, after whatever text came before it.
func (s *anthStream) stopped(reason anthropic.StopReason) error {
	switch reason {
	case anthropic.StopReasonToolUse:
		s.finish = FinishToolCalls
	case anthropic.StopReasonMaxTokens, anthropic.StopReasonModelContextWindowExceeded:
		s.finish = FinishLength
	case anthropic.StopReasonRefusal:
		s.finish = FinishContentFilter
		return &Error{Provider: s.provider, Code: ProviderContentFilter,
			Err: errors.New("the provider refused to answer (stop_reason refusal)")}
	case "":
		return s.invalid(errors.New("message_delta without a stop reason"))
	default: // end_turn, stop_sequence, pause_turn
		s.finish = FinishStop
	}
	if len(s.calls) > 0 {
		return s.invalid(errors.New("the message stopped with a tool_use block still open"))
	}
	return nil
}

// end finishes the stream: at message_stop, or at a clean end of the body
// after message_delta (the answer and its usage are whole; only the end
// marker is missing). An end before message_delta is a cut answer.
func (s *anthStream) end(stop bool) error {
	if s.finish == "" {
		if stop {
			return s.invalid(errors.New("message_stop before message_delta"))
		}
		return s.invalid(errors.New("the stream ended before message_delta"))
	}
	u := s.usage
	s.pending = append(s.pending, Event{Kind: EventDone, Usage: &u, FinishReason: s.finish})
	s.finish = "done" // nothing may follow
	return nil
}

func (s *anthStream) invalid(err error) error {
	return &Error{Provider: s.provider, Code: ProviderInvalidResponse, Err: err}
}

// Close cancels the call if it is still running and releases the
// connection; it returns once any Next in progress has returned.
func (s *anthStream) Close() error {
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
