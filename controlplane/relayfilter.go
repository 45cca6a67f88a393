package controlplane

import (
	"encoding/json"
	"fmt"
)

// phoneEvents are the client events a relayed phone may send the
// provider. The gateway set the session's instructions, tools and tool
// choice when it placed the call and runs every tool call itself, so
// nothing from the phone may change them: not a session.update naming
// them, not a response.create overriding them for one response, not an
// item that speaks as the system or answers a function call. Everything
// else a phone needs (audio, turns, cancelling, truncating what it
// played) passes.
var phoneEvents = map[string]bool{
	"input_audio_buffer.append": true, "input_audio_buffer.commit": true, "input_audio_buffer.clear": true,
	"output_audio_buffer.clear": true, "response.cancel": true, "conversation.item.truncate": true,
	"conversation.item.delete": true, "conversation.item.retrieve": true,
	"session.update": true, "response.create": true, "conversation.item.create": true,
}

// guardedFields are the session and response fields only the gateway sets:
// a stored prompt carries instructions and tools, and a response's input
// may hold any item.
var guardedFields = map[string][]string{
	"session.update":  {"instructions", "tools", "tool_choice", "prompt", "model", "type"},
	"response.create": {"instructions", "tools", "tool_choice", "prompt", "input"},
}

// phoneEventRefusal reads one event from the phone (untrusted text) and
// says why it is not relayed: "" relays it. typ is the event's type when it
// is one the gateway knows, else "other", so it may label a metric.
func phoneEventRefusal(msg []byte) (typ, why string) {
	var ev struct {
		Type     string                     `json:"type"`
		Session  map[string]json.RawMessage `json:"session"`
		Response map[string]json.RawMessage `json:"response"`
		Item     *struct {
			Type string `json:"type"`
			Role string `json:"role"`
		} `json:"item"`
	}
	if err := json.Unmarshal(msg, &ev); err != nil {
		return "other", "it is not a JSON event"
	}
	if !phoneEvents[ev.Type] {
		return "other", "the app may not send this event on a relayed session"
	}
	fields := ev.Session
	if ev.Type == "response.create" {
		fields = ev.Response
	}
	for _, f := range guardedFields[ev.Type] {
		if _, ok := fields[f]; ok {
			return ev.Type, fmt.Sprintf("%s is set by the gateway on a relayed session", f)
		}
	}
	if ev.Type == "conversation.item.create" && (ev.Item == nil || ev.Item.Type != "message" || ev.Item.Role != "user") {
		return ev.Type, "the app may add only user messages; the gateway runs the tools"
	}
	return ev.Type, ""
}

// phoneRefusalEvent is the error event the phone gets instead of the
// provider's answer, in the Realtime API's shape, naming the refused
// event's event_id when it is short enough to be one.
func phoneRefusalEvent(msg []byte, typ, why string) []byte {
	var head struct {
		EventID string `json:"event_id"`
	}
	_ = json.Unmarshal(msg, &head)
	var eventID any
	if head.EventID != "" && len(head.EventID) <= 64 {
		eventID = head.EventID
	}
	what := "This event"
	if typ != "other" {
		what = fmt.Sprintf("A %q event", typ)
	}
	b, _ := json.Marshal(map[string]any{"type": "error", "error": map[string]any{
		"type": "invalid_request_error", "code": "event_not_allowed", "param": nil, "event_id": eventID,
		"message": fmt.Sprintf("%s was not relayed: %s.", what, why),
	}})
	return b
}
