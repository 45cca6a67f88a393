package responses

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/voxgate/voxgate/sim/core"
	"github.com/voxgate/voxgate/sim/openai"
)

// event is one stream event before its sequence number, with the tokens
// it carries (which set how long it takes to "generate") and whether it
// is the first output, which waits the model's time to first token.
type event struct {
	body   map[string]any
	tokens int
	first  bool
}

func ev(typ string, kv ...any) event {
	body := map[string]any{"type": typ}
	for i := 0; i+1 < len(kv); i += 2 {
		body[kv[i].(string)] = kv[i+1]
	}
	return event{body: body}
}

// events lays out a streamed answer in the real API's order:
// response.created and response.in_progress with the empty response; for
// each output item its output_item.added, its content (a message's
// content_part.added, output_text deltas, output_text.done and
// content_part.done; a call's function_call_arguments deltas and done),
// its output_item.done; then response.completed, or response.incomplete.
func events(resp *response, a *answer, pieceBytes int) []event {
	open := mustJSON(resp)
	out := []event{ev("response.created", "response", open), ev("response.in_progress", "response", open)}
	status := a.itemStatus()
	for i, it := range a.out {
		added := it
		// A reasoning item's encrypted_content comes whole with its
		// output_item.done; the spec warns the added one's may be partial.
		added.Text, added.Arguments, added.Encrypted = "", "", ""
		var body []event
		switch it.Type {
		case "reasoning":
		case "message":
			empty := outputText{Type: "output_text", Annotations: []struct{}{}, Logprobs: []struct{}{}}
			full := empty
			full.Text = it.Text
			body = append(body, ev("response.content_part.added", "item_id", it.ID, "output_index", i, "content_index", 0, "part", empty))
			for piece := range openai.Pieces(it.Text, pieceBytes) {
				d := ev("response.output_text.delta", "item_id", it.ID, "output_index", i, "content_index", 0, "delta", piece, "logprobs", []struct{}{})
				d.tokens = openai.TokensFor(len(piece))
				body = append(body, d)
			}
			body = append(body,
				ev("response.output_text.done", "item_id", it.ID, "output_index", i, "content_index", 0, "text", it.Text, "logprobs", []struct{}{}),
				ev("response.content_part.done", "item_id", it.ID, "output_index", i, "content_index", 0, "part", full))
		case "function_call":
			for piece := range openai.Pieces(it.Arguments, pieceBytes) {
				d := ev("response.function_call_arguments.delta", "item_id", it.ID, "output_index", i, "delta", piece)
				d.tokens = openai.TokensFor(len(piece))
				body = append(body, d)
			}
			body = append(body, ev("response.function_call_arguments.done", "item_id", it.ID, "output_index", i, "name", it.Name, "arguments", it.Arguments))
		}
		opened := added.render("in_progress")
		if it.Type == "message" {
			opened = mustJSON(messageOut{ID: it.ID, Type: "message", Status: "in_progress", Role: "assistant", Content: []outputText{}})
		}
		first := ev("response.output_item.added", "output_index", i, "item", opened)
		first.first = i == 0
		if it.Type == "reasoning" {
			first.tokens = a.reasoning
		}
		out = append(out, first)
		out = append(out, body...)
		out = append(out, ev("response.output_item.done", "output_index", i, "item", it.render(status)))
	}
	if len(a.out) == 0 && len(out) > 0 {
		out[len(out)-1].first = true
	}
	return out
}

// stream sends the answer as typed server-sent events, paced by the
// latency config, applying a stream fault when one was drawn. The
// response is stored once it is finished (completed or incomplete).
func (s *Server) stream(ctx context.Context, w http.ResponseWriter, req *createRequest, resp *response, a *answer, f *core.Fault, keep func(*response)) error {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	sw := &sseWriter{w: w, rc: http.NewResponseController(w)}
	strikeAt, drip, ttft := -1, time.Duration(0), s.oa.TTFT(req.Model)
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
	evs := events(resp, a, s.env.Latency.ChunkTokens*4)
	for i, e := range evs {
		if i == strikeAt {
			return s.strike(ctx, sw, resp, a, f, keep)
		}
		delay := s.env.TokenDelay(e.tokens)
		switch {
		case drip > 0:
			delay = drip
		case e.first:
			delay += ttft
		}
		if err := s.env.Wait(ctx, delay); err != nil {
			return err
		}
		if err := sw.send(e.body); err != nil {
			return err
		}
	}
	if strikeAt >= len(evs) {
		return s.strike(ctx, sw, resp, a, f, keep)
	}
	a.finish(resp, s.env.Now())
	keep(resp)
	last := "response.completed"
	if resp.Status == "incomplete" {
		last = "response.incomplete"
	}
	return sw.send(map[string]any{"type": last, "response": resp})
}

// strike applies a stream fault at the current position.
func (s *Server) strike(ctx context.Context, sw *sseWriter, resp *response, a *answer, f *core.Fault, keep func(*response)) error {
	switch f.Kind {
	case core.FaultCutStream:
		_ = sw.rc.Flush()
		panic(http.ErrAbortHandler)
	case core.FaultTimeout:
		_ = sw.rc.Flush()
		return s.env.Hang(ctx)
	case core.FaultContentFilter:
		// The safety system stops the answer where it stands: the
		// response ends incomplete, reason content_filter.
		a.finish(resp, s.env.Now())
		resp.Status, resp.CompletedAt, resp.IncompleteDetails = "incomplete", nil, &incomplete{Reason: "content_filter"}
		keep(resp)
		return sw.send(map[string]any{"type": "response.incomplete", "response": resp})
	case core.FaultStreamError:
		// The status is already 200: the failure travels as an error
		// event, then the response ends failed.
		msg := core.ErrServer().Message
		if err := sw.send(map[string]any{"type": "error", "code": "server_error", "message": msg, "param": nil}); err != nil {
			return err
		}
		resp.Status, resp.Error = "failed", &responseError{Code: "server_error", Message: msg}
		return sw.send(map[string]any{"type": "response.failed", "response": resp})
	default: // FaultMalformedJSON
		b, _ := json.Marshal(map[string]any{"type": "response.output_text.delta", "delta": "?", "sequence_number": sw.seq})
		return sw.raw("response.output_text.delta", openai.Malformed(b))
	}
}

// sseWriter writes "event: <type>\ndata: <json>\n\n" events, numbering
// each with sequence_number and flushing it so the client sees it at once.
// The stream ends with its last event: the Responses API sends no [DONE].
type sseWriter struct {
	w   http.ResponseWriter
	rc  *http.ResponseController
	seq int
	buf []byte
}

func (sw *sseWriter) send(body map[string]any) error {
	body["sequence_number"] = sw.seq
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	return sw.raw(body["type"].(string), b)
}

func (sw *sseWriter) raw(typ string, data []byte) error {
	sw.seq++
	sw.buf = append(sw.buf[:0], "event: "...)
	sw.buf = append(sw.buf, typ...)
	sw.buf = append(sw.buf, "\ndata: "...)
	sw.buf = append(sw.buf, data...)
	sw.buf = append(sw.buf, "\n\n"...)
	if _, err := sw.w.Write(sw.buf); err != nil {
		return core.ErrClientGone
	}
	if err := sw.rc.Flush(); err != nil {
		return core.ErrClientGone
	}
	return nil
}
