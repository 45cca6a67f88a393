package anthropic

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/ssestream"

	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/llm/adapt"
)

// anthDecoder turns Messages stream events into Events: text deltas as
// they come; each tool_use block as EventToolCallDelta pieces (the first
// with the gateway's call id and the name) and then whole at its
// content_block_stop; EventDone after message_stop (or after message_delta
// when the stream ends cleanly without message_stop), with usage in
// DESIGN §10's classes.
type anthDecoder struct {
	*adapt.Emitter
	sse     *ssestream.Stream[anthropic.MessageStreamEventUnion]
	calls   map[int64]*anthCall // open tool_use blocks by content index
	ncalls  int
	started bool // message_start came
	finish  string
	usage   llm.Usage
	// thought is the thinking read since the last text or tool_use block:
	// answer text if a tool_use block comes next (thinking.go).
	thought strings.Builder
}

// anthCall is a tool_use block being streamed.
type anthCall struct {
	index int // the call's position among the response's calls
	call  llm.ToolCall
}

func (s *anthDecoder) Next() (bool, error) {
	if s.sse.Next() {
		return true, nil
	}
	return false, s.sse.Err()
}

func (s *anthDecoder) Take() error { return s.event(s.sse.Current()) }

func (s *anthDecoder) Classify(err error) *llm.Error {
	return classifyAnthropic(s.Provider, err, time.Now())
}

func (s *anthDecoder) Close() { _ = s.sse.Close() }

// reported is the call's usage once message_delta has brought its final,
// cumulative counts; message_start's are only the input's.
func (s *anthDecoder) Reported() *llm.Usage {
	if s.finish == "" {
		return nil
	}
	u := s.usage
	return &u
}

// end is the body's clean end (see finished).
func (s *anthDecoder) End() error { return s.finished(false) }

// event reads one event.
func (s *anthDecoder) event(ev anthropic.MessageStreamEventUnion) error {
	if !s.started && ev.Type != "message_start" {
		return s.Invalid(fmt.Errorf("%q before message_start", ev.Type))
	}
	if s.finish != "" && ev.Type != "message_stop" {
		return s.Invalid(fmt.Errorf("%q after message_delta", ev.Type))
	}
	switch ev.Type {
	case "message_start":
		if s.started {
			return s.Invalid(errors.New("a second message_start"))
		}
		s.started = true
		u := ev.Message.Usage
		s.usage = llm.Usage{Model: ev.Message.Model, OutputTokens: u.OutputTokens}
		if err := s.input(u.InputTokens, u.CacheReadInputTokens, u.CacheCreationInputTokens, u.OutputTokens); err != nil {
			return err
		}
	case "content_block_start":
		b := ev.ContentBlock
		switch b.Type {
		case "text":
			s.thought.Reset() // thinking before an answer's text is reasoning
			s.text(b.Text)
		case "thinking":
			s.thought.WriteString(b.Thinking)
		case "tool_use":
			if b.Name == "" {
				return s.Invalid(fmt.Errorf("tool_use block %d has no name", ev.Index))
			}
			s.spokeBeforeTool()
			c := &anthCall{index: s.ncalls, call: llm.ToolCall{ID: llm.NewCallID(), Name: b.Name}}
			s.ncalls++
			s.calls[ev.Index] = c
			s.Emit(llm.Event{Kind: llm.EventToolCallDelta, Index: c.index,
				ToolCall: &llm.ToolCall{ID: c.call.ID, Name: c.call.Name}})
		}
		// Other blocks (redacted thinking, server tools) carry nothing
		// for the seam.
	case "content_block_delta":
		switch d := ev.Delta; d.Type {
		case "text_delta":
			s.text(d.Text)
		case "thinking_delta":
			s.thought.WriteString(d.Thinking)
		case "input_json_delta":
			c := s.calls[ev.Index]
			if c == nil {
				return s.Invalid(fmt.Errorf("input_json_delta for block %d, which is no open tool_use", ev.Index))
			}
			if d.PartialJSON != "" {
				c.call.Arguments += d.PartialJSON
				s.Emit(llm.Event{Kind: llm.EventToolCallDelta, Index: c.index,
					ToolCall: &llm.ToolCall{Arguments: d.PartialJSON}})
			}
		}
	case "content_block_stop":
		if c := s.calls[ev.Index]; c != nil {
			delete(s.calls, ev.Index)
			call := c.call
			if call.Arguments == "" {
				call.Arguments = "{}" // a call without input streams no JSON
			}
			s.Emit(llm.Event{Kind: llm.EventToolCall, ToolCall: &call})
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
		return s.finished(true)
	}
	return nil
}

// maxUsage bounds each count a provider reports: beyond it a count is no
// usage but garbage, which must not reach the ledger (or wrap its sums).
const maxUsage = 1 << 40

// input sets the input classes: Anthropic reports cache reads and writes
// apart from input_tokens, DESIGN §10 counts them inside it.
func (s *anthDecoder) input(uncached, read, write, output int64) error {
	for _, n := range []int64{uncached, read, write, output} {
		if n < 0 || n >= maxUsage {
			return s.Invalid(fmt.Errorf("usage count %d out of range", n))
		}
	}
	s.usage.InputTokens = uncached + read + write
	s.usage.CachedInputTokens = read
	s.usage.CacheWriteInputTokens = write
	return nil
}

func (s *anthDecoder) text(t string) {
	if t != "" {
		s.Emit(llm.Event{Kind: llm.EventText, Text: t})
	}
}

// stopped maps the stop reason. A refusal is the provider's safety
// decision: a content-filter failure, after whatever text came before it,
// with the usage the provider reported for it.
func (s *anthDecoder) stopped(reason anthropic.StopReason) error {
	switch reason {
	case anthropic.StopReasonToolUse:
		s.finish = llm.FinishToolCalls
	case anthropic.StopReasonMaxTokens, anthropic.StopReasonModelContextWindowExceeded:
		s.finish = llm.FinishLength
	case anthropic.StopReasonRefusal:
		s.finish = llm.FinishContentFilter
		// message_delta's usage, just read, is the refused call's.
		u := s.usage
		return s.Refused(errors.New("the provider refused to answer (stop_reason refusal)"), &u)
	case "":
		return s.Invalid(errors.New("message_delta without a stop reason"))
	default: // end_turn, stop_sequence, pause_turn
		s.finish = llm.FinishStop
	}
	if len(s.calls) > 0 {
		return s.Invalid(errors.New("the message stopped with a tool_use block still open"))
	}
	return nil
}

// finished ends the stream: at message_stop, or at a clean end of the
// body after message_delta (the answer and its usage are whole; only the
// end marker is missing). An end before message_delta is a cut answer.
func (s *anthDecoder) finished(stop bool) error {
	if s.finish == "" {
		if stop {
			return s.Invalid(errors.New("message_stop before message_delta"))
		}
		return s.Invalid(errors.New("the stream ended before message_delta"))
	}
	u := s.usage
	s.Emit(llm.Event{Kind: llm.EventDone, Usage: &u, FinishReason: s.finish})
	s.finish = "done" // nothing may follow
	return nil
}
