package anthropic

import (
	"context"
	"encoding/json"
	"iter"
	"net/http"
	"time"

	"github.com/voxgate/voxgate/sim/core"
	"github.com/voxgate/voxgate/sim/openai"
)

// anthStep is one server-sent event of a streamed Message before
// rendering: its name, its data, the tokens it carries (which pace it) and
// the content block left open after it (-1 for none).
type anthStep struct {
	name   string
	data   any
	tokens int
	open   int
}

type anthBlockStart struct {
	Type         string `json:"type"`
	Index        int    `json:"index"`
	ContentBlock any    `json:"content_block"`
}

type anthBlockDelta struct {
	Type  string `json:"type"`
	Index int    `json:"index"`
	Delta any    `json:"delta"`
}

type anthTextDelta struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type anthJSONDelta struct {
	Type        string `json:"type"`
	PartialJSON string `json:"partial_json"`
}

type anthIndexed struct {
	Type  string `json:"type"`
	Index int    `json:"index"`
}

type anthTyped struct {
	Type string `json:"type"`
}

type anthMessageStart struct {
	Type    string          `json:"type"`
	Message anthMessageBody `json:"message"`
}

type anthMessageDelta struct {
	Type  string `json:"type"`
	Delta struct {
		StopReason   string  `json:"stop_reason"`
		StopSequence *string `json:"stop_sequence"`
	} `json:"delta"`
	Usage anthDeltaUsage `json:"usage"`
}

// anthDeltaUsage is message_delta's cumulative usage.
type anthDeltaUsage struct {
	InputTokens              int `json:"input_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
	OutputTokens             int `json:"output_tokens"`
}

// steps yields the events in the real API's order: message_start (input
// usage, one output token), a ping, the text block and each tool_use block
// (start, deltas, stop), message_delta with the stop reason and the
// cumulative usage, message_stop.
func (a *anthAnswer) steps(pieceBytes int) iter.Seq[anthStep] {
	return func(yield func(anthStep) bool) {
		start := anthMessageStart{Type: "message_start", Message: anthMessageBody{ID: a.id, Type: "message",
			Role: "assistant", Model: a.model, Content: []any{}, Usage: a.usage(min(1, a.output))}}
		if !yield(anthStep{name: "message_start", data: start, open: -1}) ||
			!yield(anthStep{name: "ping", data: anthTyped{Type: "ping"}, open: -1}) {
			return
		}
		block := 0
		run := func(head any, body string, delta func(string) any, last ...anthStep) bool {
			if !yield(anthStep{name: "content_block_start", data: anthBlockStart{Type: "content_block_start", Index: block, ContentBlock: head}, open: block}) {
				return false
			}
			for piece := range openai.Pieces(body, pieceBytes) {
				d := anthBlockDelta{Type: "content_block_delta", Index: block, Delta: delta(piece)}
				if !yield(anthStep{name: "content_block_delta", data: d, tokens: openai.TokensFor(len(piece)), open: block}) {
					return false
				}
			}
			for _, st := range last {
				if !yield(st) {
					return false
				}
			}
			ok := yield(anthStep{name: "content_block_stop", data: anthIndexed{Type: "content_block_stop", Index: block}, open: -1})
			block++
			return ok
		}
		switch {
		case a.thoughtBeforeTools():
			// The signature comes last, in its own delta, before the
			// block's stop.
			thought := func(p string) any { return anthThinkingDelta{Type: "thinking_delta", Thinking: p} }
			sig := anthStep{name: "content_block_delta", open: block, data: anthBlockDelta{Type: "content_block_delta", Index: block,
				Delta: anthSignatureDelta{Type: "signature_delta", Signature: thinkingSignature(a.model)}}}
			if !run(anthThinkingBlock{Type: "thinking"}, a.text, thought, sig) {
				return
			}
		case a.text != "":
			text := func(p string) any { return anthTextDelta{Type: "text_delta", Text: p} }
			if !run(anthTextBlock{Type: "text", Text: ""}, a.text, text) {
				return
			}
		}
		for _, tc := range a.calls {
			args := func(p string) any { return anthJSONDelta{Type: "input_json_delta", PartialJSON: p} }
			head := anthToolUseBlock{Type: "tool_use", ID: tc.ID, Name: tc.Name, Input: json.RawMessage("{}")}
			if !run(head, tc.Arguments, args) {
				return
			}
		}
		if !yield(anthStep{name: "message_delta", data: a.delta(a.stop, a.output), open: -1}) {
			return
		}
		yield(anthStep{name: "message_stop", data: anthTyped{Type: "message_stop"}, open: -1})
	}
}

func (a *anthAnswer) delta(stop string, output int) anthMessageDelta {
	d := anthMessageDelta{Type: "message_delta"}
	d.Delta.StopReason = stop
	d.Usage = anthDeltaUsage{InputTokens: a.input, CacheCreationInputTokens: a.write,
		CacheReadInputTokens: a.read, OutputTokens: output}
	return d
}

// streamMessage sends a as server-sent events, paced by the latency
// config, applying a stream fault when one was drawn. AfterChunks counts
// events, message_start and ping included.
func (s *Server) streamMessage(ctx context.Context, w http.ResponseWriter, a *anthAnswer, f *core.Fault) error {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	sw := &openai.SSEWriter{W: w, RC: http.NewResponseController(w)}
	strikeAt, drip := -1, time.Duration(0)
	if f != nil {
		switch f.Kind {
		case core.FaultCutStream, core.FaultTimeout, core.FaultMalformedJSON, core.FaultStreamError:
			strikeAt = f.AfterChunks
		case core.FaultContentFilter:
			strikeAt = max(f.AfterChunks, 1) // a refusal is a message: it starts
		case core.FaultSlowDrip:
			drip = time.Duration(f.IntervalMS) * time.Millisecond
		}
	}
	sent, output, open := 0, 0, -1
	for st := range a.steps(s.env.Latency.ChunkTokens * 4) {
		// A refusal set past the answer's end still comes in place of its
		// message_delta.
		if sent == strikeAt || (st.name == "message_delta" && f != nil && f.Kind == core.FaultContentFilter) {
			return s.anthStrike(ctx, sw, f, a, open, output)
		}
		if st.name == "message_stop" && f != nil && f.Kind == core.FaultNoDone {
			return nil // the body ends in order, without message_stop
		}
		delay := s.env.TokenDelay(st.tokens)
		switch {
		case drip > 0:
			delay = drip
		case sent == 0:
			delay = s.oa.TTFT(a.model)
		}
		if err := s.env.Wait(ctx, delay); err != nil {
			return err
		}
		if err := anthEvent(sw, st.name, st.data); err != nil {
			return err
		}
		sent, output, open = sent+1, output+st.tokens, st.open
	}
	if strikeAt >= sent {
		return s.anthStrike(ctx, sw, f, a, open, output)
	}
	return nil
}

// anthStrike applies a stream fault at the current position; open is the
// content block left open, output the tokens sent so far.
func (s *Server) anthStrike(ctx context.Context, sw *openai.SSEWriter, f *core.Fault, a *anthAnswer, open, output int) error {
	switch f.Kind {
	case core.FaultCutStream:
		sw.Flush()
		panic(http.ErrAbortHandler) // no final chunk: an unexpected EOF
	case core.FaultTimeout:
		sw.Flush()
		return s.env.Hang(ctx)
	case core.FaultStreamError:
		// The status is already 200: the failure is an error event, and
		// the stream ends.
		e := anthOverloaded(0)
		var b anthErrorBody
		b.Type = "error"
		b.Error.Type, b.Error.Message = e.Type, e.Message
		return anthEvent(sw, "error", b)
	case core.FaultContentFilter:
		if open >= 0 {
			if err := anthEvent(sw, "content_block_stop", anthIndexed{Type: "content_block_stop", Index: open}); err != nil {
				return err
			}
		}
		if err := anthEvent(sw, "message_delta", a.delta("refusal", output)); err != nil {
			return err
		}
		return anthEvent(sw, "message_stop", anthTyped{Type: "message_stop"})
	default: // FaultMalformedJSON
		d, _ := json.Marshal(anthBlockDelta{Type: "content_block_delta", Index: max(open, 0), Delta: anthTextDelta{Type: "text_delta", Text: "?"}})
		return anthRaw(sw, "content_block_delta", openai.Malformed(d))
	}
}

// anthEvent writes one "event: name" / "data: json" event and flushes it.
func anthEvent(sw *openai.SSEWriter, name string, data any) error {
	b, err := json.Marshal(data)
	if err != nil {
		return err
	}
	return anthRaw(sw, name, b)
}

func anthRaw(sw *openai.SSEWriter, name string, data []byte) error {
	sw.Buf = append(sw.Buf[:0], "event: "...)
	sw.Buf = append(sw.Buf, name...)
	sw.Buf = append(sw.Buf, "\ndata: "...)
	sw.Buf = append(sw.Buf, data...)
	sw.Buf = append(sw.Buf, "\n\n"...)
	if _, err := sw.W.Write(sw.Buf); err != nil {
		return core.ErrClientGone
	}
	if err := sw.RC.Flush(); err != nil {
		return core.ErrClientGone
	}
	return nil
}
