package completions

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/httpx"
	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/sse"
	"github.com/voxgate/voxgate/unit"
)

// stream answers as server-sent events. The router has committed before
// the first byte, so the status is 200; a failure from here on is
// OpenAI's in-stream error object with no [DONE], so that a client raises
// it instead of taking a cut answer for a whole one: a provider's cut,
// the completion's bound, a server's cut (at once, cut.go) or usage that
// could not be kept. The completion is recorded and settled before the
// last line goes out.
func (c *completion) stream(ctx context.Context, w http.ResponseWriter, r *http.Request, st llm.Stream) error {
	wr, err := sse.NewWriter(w, r)
	if err != nil {
		c.failed(err)
		c.end(ctx)
		return apierr.Wrap(apierr.Internal, "", err)
	}
	cw := newChunkStream(wr, c.id, c.created, c.obs.firstByte)
	cw.SetModel(c.model())
	// run closes the writer and ends the watch, after a panic too.
	c.wr, c.cw, c.cut = wr, cw, unit.WatchCut(r.Context(), func(e *apierr.Error) { _ = cw.Fail(e) })
	screen := c.newAnswerScreen(ctx) // the output filter: text goes out as it lets it
	for {
		ev, err := st.Next(ctx)
		if err != nil {
			c.failed(err)
			_ = st.Close() // a client that left: the upstream call ends now
			c.end(ctx)
			c.fail(unit.ClientError(ctx, err))
			return nil
		}
		c.took(ev)
		if ev.Kind == llm.EventText || ev.Kind == llm.EventDone {
			var text string
			var leak error
			if ev.Kind == llm.EventText {
				text, leak = screen.Write(ev.Text)
			} else {
				text, leak = screen.Close()
			}
			if leak != nil {
				// Personal data: the answer ends here, nothing of it sent.
				c.judged(screen)
				if ev.Kind == llm.EventDone {
					c.done(ev) // the answer is whole: its usage is the provider's
					c.audit.failure = leak
				} else {
					c.failed(leak)
				}
				_ = st.Close()
				c.end(ctx)
				c.fail(apierr.From(leak))
				return nil
			}
			if ev.Kind == llm.EventDone {
				c.judged(screen)
			}
			if text != "" {
				_ = cw.Event(llm.Event{Kind: llm.EventText, Text: text})
			}
			if ev.Kind == llm.EventText {
				continue
			}
		}
		if ev.Kind == llm.EventDone {
			c.done(ev)
			if err := c.end(ctx); err != nil {
				c.fail(apierr.From(err))
				return nil
			}
			if c.cutShort() {
				return nil
			}
			var usage *llm.Usage
			if c.req.StreamOptions != nil && c.req.StreamOptions.IncludeUsage {
				usage = c.answerUsage()
			}
			c.obs.outcome = "ok"
			_ = cw.Finish(finishReason(ev.FinishReason), usage)
			return nil
		}
		// A failed write is a client gone: the next Next sees its context.
		_ = cw.Event(ev)
	}
}

// newChunkStream writes a streamed answer through its event stream's
// Writer: each chunk a frame of data alone, the error its last frame,
// which a server's cut may send while the answer is still being written.
// wrote runs after each chunk sent, on the handler's goroutine alone.
func newChunkStream(wr *sse.Writer, id string, created int64, wrote func()) *ChunkWriter {
	return &ChunkWriter{id: id, created: created, out: func(data []byte, last bool) error {
		if last {
			return wr.DataLast(data)
		}
		if err := wr.Data(data); err != nil {
			return err
		}
		wrote()
		return nil
	}}
}

// fail ends a begun stream with e, unless its request ended first.
func (c *completion) fail(e *apierr.Error) {
	if c.cutShort() {
		return
	}
	c.obs.outcome = string(e.Code)
	if c.cw.Fail(e) == nil {
		c.obs.firstByte() // when the error is the stream's first line
	}
}

// cutShort ends the watch for a server's cut and reports whether the
// request ended first: the client left (told nothing), or the server cut
// it and was told why. Nothing more is written then.
func (c *completion) cutShort() bool {
	if !c.cut.Over() {
		return false
	}
	ctx := c.cut.Context()
	c.obs.outcome = string(c.cut.Reason().Code)
	if httpx.ClientGone(ctx) {
		c.obs.outcome = "cancelled"
	}
	httpx.Logger(ctx).InfoContext(ctx, "completion cancelled", "cause", context.Cause(ctx))
	return true
}

// whole answers stream: false with one chat.completion. Nothing is
// written before the answer is whole, so every failure is JSON.
func (c *completion) whole(ctx context.Context, w http.ResponseWriter, st llm.Stream) error {
	msg := CompletionMessage{Role: llm.RoleAssistant}
	var text []byte
	for {
		ev, err := st.Next(ctx)
		if err != nil {
			c.failed(err)
			_ = st.Close()
			c.end(ctx)
			return unit.ClientError(ctx, err)
		}
		c.took(ev)
		switch ev.Kind {
		case llm.EventText:
			text = append(text, ev.Text...)
		case llm.EventToolCall:
			if tc := ev.ToolCall; tc != nil {
				msg.ToolCalls = append(msg.ToolCalls, CompletionToolCall{ID: tc.ID, Type: "function",
					Function: CompletionCalled{Name: tc.Name, Arguments: tc.Arguments}})
			}
		case llm.EventDone:
			// The output filter, as on a stream: its verdict on the whole
			// text, before the audit row is written.
			screen := c.newAnswerScreen(ctx)
			out, leak := screen.Whole(string(text))
			c.judged(screen)
			c.done(ev)
			if leak != nil {
				c.audit.failure = leak
				c.obs.outcome = string(apierr.AIPIILeak)
				c.end(ctx)
				return leak
			}
			if err := c.end(ctx); err != nil {
				return err // its usage is lost: not a success
			}
			text = []byte(out)
			msg.Content = json.RawMessage("null")
			if len(text) > 0 || len(msg.ToolCalls) == 0 {
				raw, err := json.Marshal(string(text))
				if err != nil {
					return apierr.Wrap(apierr.Internal, "", err)
				}
				msg.Content = raw
			}
			httpx.WriteJSON(w, http.StatusOK, Completion{ID: c.id, Object: "chat.completion", Created: c.created,
				Model: c.model(), Usage: NewCompletionUsage(*c.answerUsage()),
				Choices: []CompletionChoice{{Message: msg, FinishReason: finishReason(ev.FinishReason)}}})
			c.obs.firstByte()
			return nil
		}
	}
}

// answerUsage is the usage the client is told: the whole answer's. A
// continued answer's provider reported the continuation alone; the part
// the client read from the attempt cut before it is added as its ledger
// record counts it (llm.Trace.CutOutput), so completion_tokens cover the
// whole text. The prompt is the continuation's call's, which read that
// part as its prefill. An estimate already counts everything sent.
func (c *completion) answerUsage() *llm.Usage {
	u := *c.usage
	if !c.estimated {
		u.OutputTokens += c.trace.CutOutput()
	}
	return &u
}

// took counts what an event brought, for an estimate should the provider
// report nothing.
func (c *completion) took(ev llm.Event) {
	switch ev.Kind {
	case llm.EventText:
		c.sent += len(ev.Text)
	case llm.EventToolCallDelta:
		if ev.ToolCall != nil {
			c.sent += len(ev.ToolCall.Name) + len(ev.ToolCall.Arguments)
		}
	}
}

// finishReason is llm's, which are OpenAI's; a provider that gave none
// stopped.
func finishReason(r string) string {
	if r == "" {
		return llm.FinishStop
	}
	return r
}
