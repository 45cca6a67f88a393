package openai

import (
	"context"
	"encoding/json"
	"iter"
	"math/rand/v2"
	"net/http"
	"time"
	"unicode/utf8"

	"github.com/voxgate/voxgate/sim/core"
)

// step is one stream chunk before rendering, with the tokens it carries
// (which set how long it takes to "generate").
type step struct {
	chunk  chunkBody
	tokens int
}

// steps yields the chunks of a completion in the real API's order: an
// opening delta with the role, the text in pieces, then each tool call (id,
// type and name first, arguments in pieces), a closing delta with the
// finish_reason, and, when asked for, a usage chunk with no choices.
func (c *Completion) steps(includeUsage bool, pieceBytes int) iter.Seq[step] {
	return func(yield func(step) bool) {
		var usage json.RawMessage
		if includeUsage {
			usage = json.RawMessage("null")
		}
		mk := func(delta any, finish *string) chunkBody {
			return chunkBody{ID: c.id, Object: "chat.completion.chunk", Created: c.created, Model: c.Model,
				ServiceTier: c.tier(), SystemFingerprint: fingerprint, Usage: usage,
				Choices: []chunkChoice{{Delta: delta, FinishReason: finish}}}
		}
		first := firstDelta{Role: "assistant"}
		callsInFirst := c.Text == "" && len(c.Calls) > 0
		if callsInFirst {
			first.ToolCalls = []toolCallDelta{c.callHeader(0)}
		} else {
			empty := ""
			first.Content = &empty
		}
		if !yield(step{chunk: mk(first, nil)}) {
			return
		}
		for piece := range Pieces(c.Text, pieceBytes) {
			if !yield(step{chunk: mk(contentDelta{Content: piece}, nil), tokens: TokensFor(len(piece))}) {
				return
			}
		}
		for i, tc := range c.Calls {
			if i > 0 || !callsInFirst {
				if !yield(step{chunk: mk(toolCallsDelta{ToolCalls: []toolCallDelta{c.callHeader(i)}}, nil), tokens: TokensFor(len(tc.Name))}) {
					return
				}
			}
			for piece := range Pieces(tc.Arguments, pieceBytes) {
				d := toolCallsDelta{ToolCalls: []toolCallDelta{{Index: i, Function: functionDelta{Arguments: piece}}}}
				if !yield(step{chunk: mk(d, nil), tokens: TokensFor(len(piece))}) {
					return
				}
			}
		}
		finish := c.Finish
		if !yield(step{chunk: mk(emptyDelta{}, &finish)}) {
			return
		}
		if includeUsage {
			u, _ := json.Marshal(c.Usage)
			last := mk(nil, nil)
			last.Choices, last.Usage = []chunkChoice{}, u
			yield(step{chunk: last})
		}
	}
}

func (c *Completion) callHeader(i int) toolCallDelta {
	tc := c.Calls[i]
	return toolCallDelta{Index: i, ID: tc.ID, Type: "function", Function: functionDelta{Name: tc.Name}}
}

// Pieces splits s into parts of about n bytes without splitting a character.
func Pieces(s string, n int) iter.Seq[string] {
	return func(yield func(string) bool) {
		for len(s) > 0 {
			end := min(n, len(s))
			for end < len(s) && !utf8.RuneStart(s[end]) {
				end++
			}
			if !yield(s[:end]) {
				return
			}
			s = s[end:]
		}
	}
}

// streamCompletion sends c as server-sent events, paced by the latency
// config, applying a stream fault when one was drawn.
func (s *Server) streamCompletion(ctx context.Context, w http.ResponseWriter, req *ChatRequest, c *Completion, f *core.Fault) error {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	rc := http.NewResponseController(w)
	sw := &SSEWriter{W: w, RC: rc}

	strikeAt := -1
	drip := time.Duration(0)
	ttft := s.TTFT(req.Model)
	if f != nil {
		switch f.Kind {
		case core.FaultCutStream, core.FaultTimeout, core.FaultMalformedJSON, core.FaultStreamError, core.FaultContentFilter:
			strikeAt = f.AfterChunks
		case core.FaultSlowDrip:
			drip = time.Duration(f.IntervalMS) * time.Millisecond
		case core.FaultSlowStart:
			ttft = time.Duration(f.IntervalMS) * time.Millisecond
		}
	}
	pieceBytes := s.env.Latency.ChunkTokens * 4
	sent := 0
	for st := range c.steps(req.includeUsage(), pieceBytes) {
		if sent == strikeAt {
			return s.strike(ctx, sw, req, f, c)
		}
		delay := s.env.TokenDelay(st.tokens)
		switch {
		case drip > 0:
			delay = drip
		case sent == 0:
			delay = ttft
		}
		if err := s.env.Wait(ctx, delay); err != nil {
			return err
		}
		if req.obfuscate() {
			st.chunk.Obfuscation = obfuscation()
		}
		if err := sw.event(st.chunk); err != nil {
			return err
		}
		sent++
	}
	if strikeAt >= sent {
		return s.strike(ctx, sw, req, f, c)
	}
	if f != nil && f.Kind == core.FaultNoDone {
		// The body ends in order, the usage sent, but no end marker.
		return nil
	}
	return sw.done()
}

// strike applies a stream fault at the current position.
func (s *Server) strike(ctx context.Context, sw *SSEWriter, req *ChatRequest, f *core.Fault, c *Completion) error {
	switch f.Kind {
	case core.FaultCutStream:
		sw.Flush()
		// Aborting the handler drops the connection without the final
		// chunk of the HTTP body: the client sees an unexpected EOF, not a
		// clean end without [DONE].
		panic(http.ErrAbortHandler)
	case core.FaultTimeout:
		sw.Flush()
		return s.env.Hang(ctx)
	case core.FaultContentFilter:
		// The safety system stops the answer where it stands: the finish
		// reason says so, and the usage and the end follow as usual.
		return s.filtered(sw, req, c)
	case core.FaultStreamError:
		// The status is already 200, so the failure travels as an event in
		// the error body's shape, and the stream ends without [DONE].
		body, _ := core.ErrServer().MarshalJSON() // cannot fail: strings only
		return sw.Raw(string(body))
	default: // FaultMalformedJSON
		chunk, _ := json.Marshal(chunkBody{ID: c.id, Object: "chat.completion.chunk", Created: c.created, Model: c.Model,
			Choices: []chunkChoice{{Delta: contentDelta{Content: "?"}}}})
		if err := sw.Raw(string(Malformed(chunk))); err != nil {
			return err
		}
		return sw.done()
	}
}

// filtered ends a stream with finish_reason content_filter, then its usage
// when asked for, then [DONE].
func (s *Server) filtered(sw *SSEWriter, req *ChatRequest, c *Completion) error {
	finish := "content_filter"
	stop := chunkBody{ID: c.id, Object: "chat.completion.chunk", Created: c.created, Model: c.Model,
		ServiceTier: c.tier(), SystemFingerprint: fingerprint,
		Choices: []chunkChoice{{Delta: emptyDelta{}, FinishReason: &finish}}}
	if req.includeUsage() {
		stop.Usage = json.RawMessage("null")
	}
	if err := sw.event(stop); err != nil {
		return err
	}
	if req.includeUsage() {
		u, _ := json.Marshal(c.Usage)
		last := stop
		last.Choices, last.Usage = []chunkChoice{}, u
		if err := sw.event(last); err != nil {
			return err
		}
	}
	return sw.done()
}

// obfuscation returns the padding the real API adds to each chunk so that
// the size of an event does not give away the size of its tokens: random
// letters and digits, of random length.
func obfuscation() string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, 2+rand.IntN(15))
	for i := range b {
		b[i] = alphabet[rand.IntN(len(alphabet))]
	}
	return string(b)
}

// SSEWriter writes "data: <json>\n\n" events, flushing each so the client
// sees it at once.
type SSEWriter struct {
	W   http.ResponseWriter
	RC  *http.ResponseController
	Buf []byte
}

func (sw *SSEWriter) event(chunk chunkBody) error {
	b, err := json.Marshal(chunk)
	if err != nil {
		return err
	}
	return sw.Raw(string(b))
}

func (sw *SSEWriter) Raw(data string) error {
	sw.Buf = append(sw.Buf[:0], "data: "...)
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

func (sw *SSEWriter) done() error { return sw.Raw("[DONE]") }

func (sw *SSEWriter) Flush() { _ = sw.RC.Flush() }
