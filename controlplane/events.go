package controlplane

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	oairt "github.com/openai/openai-go/v3/realtime"

	"github.com/voxgate/voxgate/internal/auth"
	"github.com/voxgate/voxgate/tools"
)

// handle acts on one server event of a held call. The provider closes a
// Realtime call by closing the socket (dropped reads it), never with an
// event, so closed is always "".
func (c *call) handle(ctx context.Context, data []byte) (closed string) {
	c.event(ctx, data)
	return ""
}

// event acts on one server event. Every event counts as activity for the
// idle timer: a call with nobody on it sends none.
func (c *call) event(ctx context.Context, data []byte) {
	var head struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(data, &head) != nil {
		return
	}
	arrived := time.Now()
	c.lastActivity = c.s.clock.Now()
	switch head.Type {
	case "response.function_call_arguments.done":
		// Sent for cut responses too, with arguments that may be cut: the
		// call waits for its item or its response to complete.
		var ev oairt.ResponseFunctionCallArgumentsDoneEvent
		if json.Unmarshal(data, &ev) == nil && ev.CallID != "" && !c.answered[ev.CallID] {
			c.written[ev.CallID] = fnCall{response: ev.ResponseID, name: ev.Name, args: ev.Arguments}
		}
	case "response.output_item.done":
		var ev struct {
			ResponseID string `json:"response_id"`
			Item       struct {
				Type      string `json:"type"`
				Status    string `json:"status"`
				CallID    string `json:"call_id"`
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			} `json:"item"`
		}
		if json.Unmarshal(data, &ev) != nil || ev.Item.Type != "function_call" || ev.Item.CallID == "" {
			return
		}
		delete(c.written, ev.Item.CallID)
		if ev.Item.Status != "completed" {
			c.answered[ev.Item.CallID] = true // cut short: never run, recorded or answered
			return
		}
		c.runTool(ctx, arrived, ev.ResponseID, ev.Item.CallID, ev.Item.Name, ev.Item.Arguments)
	case "response.done":
		var ev struct {
			Response struct {
				ID     string          `json:"id"`
				Status string          `json:"status"`
				Usage  json.RawMessage `json:"usage"`
			} `json:"response"`
		}
		if json.Unmarshal(data, &ev) == nil {
			c.observe(ev.Response.Usage, false)
			c.responseDone(ctx, arrived, ev.Response.ID, ev.Response.Status)
		}
	case "response.output_audio_transcript.done", "response.audio_transcript.done":
		// What the model said, once a part is whole (the second name is
		// the beta API's).
		var ev struct {
			ItemID       string `json:"item_id"`
			ContentIndex int    `json:"content_index"`
			Transcript   string `json:"transcript"`
		}
		if json.Unmarshal(data, &ev) == nil && ev.Transcript != "" {
			c.screenTranscript(ctx, fmt.Sprintf("%s/%d", ev.ItemID, ev.ContentIndex), ev.Transcript)
		}
	case "conversation.item.input_audio_transcription.completed":
		var ev struct {
			Usage json.RawMessage `json:"usage"`
		}
		if json.Unmarshal(data, &ev) == nil {
			c.observe(ev.Usage, true)
		}
	case "session.created", "session.updated":
		c.checkConfig(data)
	case "error":
		var ev struct {
			Error struct {
				Code string `json:"code"`
			} `json:"error"`
		}
		if json.Unmarshal(data, &ev) == nil && ev.Error.Code == "session_expired" {
			c.expired = true // the socket closes next
		}
	}
}

// observe adds one usage object, read by the same rules as usage an app
// reports, and notes the sum for the next save.
func (c *call) observe(raw json.RawMessage, transcription bool) {
	if len(raw) == 0 || string(raw) == "null" {
		return
	}
	if transcription {
		raw, _ = json.Marshal(map[string]json.RawMessage{"transcription": raw})
	}
	u, err := parseUsage(raw)
	if err != nil || u == nil {
		c.s.log.Warn("voice sideband: usage not read", "session_id", c.id, "err", err)
		return
	}
	c.observed.Session = c.observed.Session.Add(u.Session)
	c.observed.Transcription = c.observed.Transcription.Add(u.Transcription)
	c.s.noteUsage(c.id, c.observed)
}

// runTool runs one of the model's completed function calls through the
// executor, as the session's user with its plan, and keeps its output for
// when its response is done. A call is run once however often it is seen,
// and by whichever holder: the executor runs a (session, call_id) once,
// and a replayed result was answered by the holder that ran it. A refused
// call is answered with the refusal, so the model can say so.
func (c *call) runTool(ctx context.Context, arrived time.Time, responseID, callID, name, args string) {
	if c.answered[callID] {
		return
	}
	c.answered[callID] = true
	ran := time.Now()
	res, err := c.s.runTool(ctx, auth.Principal{UserID: c.userID, Plan: c.plan}, c.id, c.mode,
		ToolCallRequest{CallID: callID, Name: name, Arguments: json.RawMessage(args)})
	ranFor := time.Since(ran)
	if err == nil && res.Replayed {
		// Run before, by this call's earlier holder, which answered it.
		return
	}
	output := res.Output
	if err != nil {
		output = tools.Refusal(err).Output()
	}
	item, _ := json.Marshal(map[string]any{"type": "conversation.item.create",
		"item": map[string]any{"type": "function_call_output", "call_id": callID, "output": output}})
	a := c.outputs[responseID]
	if a == nil {
		a = &answers{}
		c.outputs[responseID] = a
	}
	a.items = append(a.items, item)
	a.overhead += time.Since(arrived) - ranFor
}

// responseDone answers a response's function calls: its completed calls
// whose item never said so run now (a completed response completed them),
// a cut response's never do; then every output goes out, and one
// response.create after them, since the API refuses one while a response
// is active and answers each with a response of its own.
func (c *call) responseDone(ctx context.Context, arrived time.Time, responseID, status string) {
	for callID, fc := range c.written {
		if fc.response != responseID {
			continue
		}
		delete(c.written, callID)
		if status == "completed" {
			c.runTool(ctx, arrived, responseID, callID, fc.name, fc.args)
		} else {
			c.answered[callID] = true
		}
	}
	a := c.outputs[responseID]
	if a == nil {
		return
	}
	delete(c.outputs, responseID)
	c.send(append(a.items, []byte(`{"type":"response.create"}`))...)
	c.s.metrics.roundTrip.Observe((a.overhead + time.Since(arrived)).Seconds())
}

// checkConfig re-asserts the gateway's session config when the session
// as updated no longer has its instructions, tools or tool choice: the
// app may send session.update on its data channel.
func (c *call) checkConfig(data []byte) {
	var ev struct {
		Session struct {
			Instructions string `json:"instructions"`
			ToolChoice   any    `json:"tool_choice"`
			Tools        []struct {
				Name        string `json:"name"`
				Description string `json:"description"`
			} `json:"tools"`
		} `json:"session"`
	}
	if json.Unmarshal(data, &ev) != nil {
		return
	}
	// Only what the gateway sets is compared: the provider fills in
	// default instructions where it set none.
	got, want := ev.Session, c.config
	same := (want.Instructions == "" || got.Instructions == want.Instructions) && len(got.Tools) == len(want.Tools)
	for i := 0; same && i < len(want.Tools); i++ {
		same = got.Tools[i].Name == want.Tools[i].Name && got.Tools[i].Description == want.Tools[i].Description
	}
	choice := want.ToolChoice
	if choice == "" {
		choice = "auto"
	}
	if len(want.Tools) > 0 && got.ToolChoice != choice {
		same = false
	}
	if same {
		return
	}
	c.s.metrics.reasserts.Inc()
	c.sendConfig()
}

// sendConfig sends the gateway's session config over whatever the session
// holds now: right after every attach, since a sideband is promised no
// session.created and the phone may have changed the session first, and
// whenever a session.updated shows it changed.
func (c *call) sendConfig() {
	if update, err := c.config.UpdateEvent(); err == nil {
		c.send(update)
	}
}
