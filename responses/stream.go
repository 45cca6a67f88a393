package responses

import (
	"context"
	"net/http"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/httpx"
	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/sse"
	"github.com/voxgate/voxgate/unit"
)

// stream answers as the typed event stream, in the API's order:
// response.created and response.in_progress; the message item (added,
// its content part, the text deltas as the output filter lets them out,
// text done, part done, item done); each function call item (added, its
// argument deltas and done, item done); response.completed. The router
// has committed before the first byte, so the status is 200; a failure
// from here on is an error event (voxgate's code) then response.failed
// (the spec's code), so a client raises it instead of taking a cut
// answer for a whole one. A call's events follow the message's: the
// model's calls are held until its text is screened and closed, since
// output items are sent one after another.
func (x *exchange) stream(ctx context.Context, w http.ResponseWriter, r *http.Request, st llm.Stream) error {
	wr, err := sse.NewWriter(w, r)
	if err != nil {
		x.failed(err)
		x.end(ctx)
		return apierr.Wrap(apierr.Internal, "", err)
	}
	x.wr = wr
	// A server's cut says why at once, from the watch's goroutine: one
	// last event, the error (SendLast writes one).
	x.cut = unit.WatchCut(r.Context(), func(e *apierr.Error) { _ = wr.SendLast("error", x.errorEvent(e)) })
	_ = x.emit("response.created", event{"response": mustRaw(x.resp)})
	_ = x.emit("response.in_progress", event{"response": mustRaw(x.resp)})
	screen := x.newScreen(ctx)
	msg := &openMessage{}
	var calls []*llm.ToolCall
	pieces := map[string][]string{} // a call's argument deltas, by call id
	ids := map[int]string{}         // a streaming call's id, by its index
	for {
		ev, err := st.Next(ctx)
		if err != nil {
			x.failed(err)
			_ = st.Close()
			x.end(ctx)
			x.fail(unit.ClientError(ctx, err))
			return nil
		}
		x.took(ev)
		switch ev.Kind {
		case llm.EventText:
			text, leak := screen.Write(ev.Text)
			if leak != nil {
				x.judged(screen)
				x.failed(leak)
				_ = st.Close()
				x.end(ctx)
				x.fail(apierr.From(leak))
				return nil
			}
			x.text(msg, text)
		case llm.EventToolCallDelta:
			if tc := ev.ToolCall; tc != nil {
				if tc.ID != "" {
					ids[ev.Index] = tc.ID
				}
				id := ids[ev.Index]
				pieces[id] = append(pieces[id], tc.Arguments)
			}
		case llm.EventToolCall:
			if ev.ToolCall != nil {
				calls = append(calls, ev.ToolCall)
			}
		case llm.EventDone:
			rest, leak := screen.Close()
			x.judged(screen)
			x.done(ev)
			if leak != nil {
				x.audit.failure = leak
				_ = st.Close()
				x.end(ctx)
				x.fail(apierr.From(leak))
				return nil
			}
			x.text(msg, rest)
			x.closeMessage(msg)
			for _, tc := range calls {
				x.call(tc, pieces[tc.ID])
			}
			x.complete()
			if err := x.end(ctx); err != nil {
				x.fail(apierr.From(err))
				return nil
			}
			if err := x.keep(ctx); err != nil {
				x.fail(apierr.From(err))
				return nil
			}
			if x.cutShort() {
				return nil
			}
			_ = x.emit("response.completed", event{"response": mustRaw(x.resp)})
			return nil
		}
	}
}

// openMessage is the streamed message item, once its first text is out.
type openMessage struct {
	id    string
	index int
	text  string
}

// text sends a screened piece of the answer, opening the message first.
func (x *exchange) text(m *openMessage, text string) {
	if text == "" {
		return
	}
	if m.id == "" {
		m.id, m.index = unit.NewID("msg_"), len(x.resp.Output)
		_ = x.emit("response.output_item.added", event{"output_index": m.index,
			"item": messageItem(m.id, "in_progress", []OutputText{})})
		_ = x.emit("response.content_part.added", event{"item_id": m.id, "output_index": m.index, "content_index": 0,
			"part": outputText("")})
	}
	m.text += text
	_ = x.emit("response.output_text.delta", event{"item_id": m.id, "output_index": m.index, "content_index": 0,
		"delta": text, "logprobs": []struct{}{}})
}

// closeMessage ends an opened message and adds it to the output.
func (x *exchange) closeMessage(m *openMessage) {
	if m.id == "" {
		return
	}
	part := outputText(m.text)
	_ = x.emit("response.output_text.done", event{"item_id": m.id, "output_index": m.index, "content_index": 0,
		"text": m.text, "logprobs": []struct{}{}})
	_ = x.emit("response.content_part.done", event{"item_id": m.id, "output_index": m.index, "content_index": 0, "part": part})
	item := messageItem(m.id, "completed", []OutputText{part})
	x.resp.Output = append(x.resp.Output, item)
	_ = x.emit("response.output_item.done", event{"output_index": m.index, "item": item})
}

// call sends one function call item: added, its argument deltas as the
// model wrote them, done.
func (x *exchange) call(tc *llm.ToolCall, pieces []string) {
	id, index := unit.NewID("fc_"), len(x.resp.Output)
	_ = x.emit("response.output_item.added", event{"output_index": index, "item": callItem(id, "in_progress", tc.ID, tc.Name, "")})
	if len(pieces) == 0 {
		pieces = []string{tc.Arguments}
	}
	for _, p := range pieces {
		if p != "" {
			_ = x.emit("response.function_call_arguments.delta", event{"item_id": id, "output_index": index, "delta": p})
		}
	}
	_ = x.emit("response.function_call_arguments.done", event{"item_id": id, "output_index": index, "name": tc.Name,
		"arguments": tc.Arguments})
	item := callItem(id, "completed", tc.ID, tc.Name, tc.Arguments)
	x.resp.Output = append(x.resp.Output, item)
	_ = x.emit("response.output_item.done", event{"output_index": index, "item": item})
}

// emit sends one event numbered in order, as OpenAI's stream does:
// "event: response.output_text.delta" and the data with its type first
// (sse.Writer.Send). A failed write is a client gone: the next Next sees
// its context.
func (x *exchange) emit(typ string, e event) error {
	e["sequence_number"] = x.nextSeq()
	return x.wr.Send(typ, e)
}

func (x *exchange) nextSeq() int64 { return x.seqs.Add(1) - 1 }

// errorEvent is the in-stream error event's fields: voxgate's code.
func (x *exchange) errorEvent(e *apierr.Error) event {
	return event{"code": string(e.Code), "message": e.Message, "param": nil, "sequence_number": x.nextSeq()}
}

// fail ends a begun stream: the error event, then response.failed,
// unless the request ended first.
func (x *exchange) fail(e *apierr.Error) {
	if x.cutShort() {
		return
	}
	code := "server_error"
	if e.Code == apierr.AIRateLimited {
		code = "rate_limit_exceeded"
	}
	msg := e.Message
	if msg == "" {
		msg = string(e.Code)
	}
	_ = x.wr.Send("error", x.errorEvent(e))
	x.resp.Status, x.resp.Error = "failed", &ResponseError{Code: code, Message: msg}
	_ = x.wr.SendLast("response.failed", event{"response": mustRaw(x.resp), "sequence_number": x.nextSeq()})
}

// cutShort ends the watch and reports whether the request ended first:
// the client left, or the server cut it and was told why.
func (x *exchange) cutShort() bool {
	if !x.cut.Over() {
		return false
	}
	ctx := x.cut.Context()
	httpx.Logger(ctx).InfoContext(ctx, "response cancelled", "cause", context.Cause(ctx))
	return true
}
