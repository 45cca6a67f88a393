package controlplane

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
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
// is one the gateway knows, else "other", so it may label a metric. The
// event is read as strictly as any reader of it might be: a repeated key,
// or a key that differs from one the filter reads only in case, is
// refused, so no parser downstream can see an event other than the one
// checked here.
func phoneEventRefusal(msg []byte) (typ, why string) {
	top, ok := objectFields(msg, "type", "session", "response", "item")
	if !ok {
		return "other", "it is not one JSON event with each field named once"
	}
	if json.Unmarshal(top["type"], &typ) != nil || !phoneEvents[typ] {
		return "other", "the app may not send this event on a relayed session"
	}
	part := map[string]string{"session.update": "session", "response.create": "response"}[typ]
	if part != "" && top[part] != nil && string(top[part]) != "null" {
		fields, ok := objectFields(top[part])
		if !ok {
			return typ, "its " + part + " is not an object with each field named once"
		}
		for k := range fields {
			for _, g := range guardedFields[typ] {
				if strings.EqualFold(k, g) {
					return typ, fmt.Sprintf("%s is set by the gateway on a relayed session", g)
				}
			}
		}
	}
	if typ == "conversation.item.create" {
		item, ok := objectFields(top["item"], "type", "role")
		var itemType, role string
		if !ok || json.Unmarshal(item["type"], &itemType) != nil || json.Unmarshal(item["role"], &role) != nil ||
			itemType != "message" || role != "user" {
			return typ, "the app may add only user messages; the gateway runs the tools"
		}
	}
	return typ, ""
}

// objectFields reads one JSON object's fields, refusing a repeated key, a
// key that matches one of exact only when case is ignored, anything but
// one object, and anything after it.
func objectFields(raw []byte, exact ...string) (map[string]json.RawMessage, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, false
	}
	out := map[string]json.RawMessage{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, false
		}
		k, _ := tok.(string)
		if _, dup := out[k]; dup {
			return nil, false
		}
		for _, e := range exact {
			if k != e && strings.EqualFold(k, e) {
				return nil, false
			}
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, false
		}
		out[k] = v
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return nil, false
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, false
	}
	return out, true
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
