package realtime

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/voxgate/voxgate/sim/core"
	"github.com/voxgate/voxgate/sim/openai"
)

// clientEvent is a Realtime client event, decoded and checked. Only the
// fields its type uses are set.
type clientEvent struct {
	Type    string
	EventID string
	Session map[string]any // session.update
	// Response is response.create's parameters (nil when absent).
	Response map[string]any
	Item     *rtItem // conversation.item.create
	// ItemText is a message item's text: its input_text/output_text parts.
	ItemText       string
	PreviousItemID string
	ItemID         string // conversation.item.delete/retrieve/truncate
	ContentIndex   int
	AudioEndMS     int
	AudioBytes     int // input_audio_buffer.append: decoded PCM bytes
}

// clientEventTypes are the client events the API defines, in its order.
func clientEventTypes() []string {
	return []string{"session.update", "input_audio_buffer.append", "input_audio_buffer.commit",
		"input_audio_buffer.clear", "conversation.item.create", "conversation.item.retrieve",
		"conversation.item.truncate", "conversation.item.delete", "response.create", "response.cancel",
		"output_audio_buffer.clear"}
}

// wireClientEvent is every field any client event carries.
type wireClientEvent struct {
	Type           *string         `json:"type"`
	EventID        string          `json:"event_id"`
	Session        json.RawMessage `json:"session"`
	Item           json.RawMessage `json:"item"`
	PreviousItemID string          `json:"previous_item_id"`
	ItemID         string          `json:"item_id"`
	ContentIndex   int             `json:"content_index"`
	AudioEndMS     int             `json:"audio_end_ms"`
	Audio          *string         `json:"audio"`
	Response       json.RawMessage `json:"response"`
}

// decodeClientEvent parses one client event. On refusal it returns the
// error to send back as an `error` event, and whatever event_id it could
// read, so the client can match the error to its event.
func decodeClientEvent(data []byte) (*clientEvent, *core.APIError) {
	var w wireClientEvent
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&w); err != nil {
		ev := &clientEvent{}
		if apiErr, ok := core.JSONError(err, "").(*core.APIError); ok && apiErr.Code == "invalid_type" {
			var id struct {
				EventID string `json:"event_id"`
			}
			_ = json.Unmarshal(data, &id)
			ev.EventID = id.EventID
			return ev, apiErr
		}
		return ev, ErrInvalidEventJSON(err)
	}
	if dec.More() {
		return &clientEvent{EventID: w.EventID}, ErrInvalidEventJSON(fmt.Errorf("unexpected data after the event"))
	}
	ev := &clientEvent{EventID: w.EventID, PreviousItemID: w.PreviousItemID, ItemID: w.ItemID,
		ContentIndex: w.ContentIndex, AudioEndMS: w.AudioEndMS}
	if w.Type == nil {
		return ev, &core.APIError{Status: 400, Type: "invalid_request_error", Code: "invalid_event", Message: "The 'type' field is missing."}
	}
	ev.Type = *w.Type
	var err *core.APIError
	switch ev.Type {
	case "session.update":
		ev.Session, err = decodeObject(w.Session, "session", true)
		if err == nil {
			err = checkSession(ev.Session, "session")
		}
	case "conversation.item.create":
		ev.Item, ev.ItemText, err = decodeItem(w.Item)
	case "conversation.item.retrieve", "conversation.item.delete":
		err = needItemID(ev)
	case "conversation.item.truncate":
		err = needItemID(ev)
		if err == nil && (ev.ContentIndex < 0 || ev.AudioEndMS < 0) {
			err = core.ErrInvalidValue("audio_end_ms", "Invalid 'audio_end_ms': must not be negative.")
		}
	case "input_audio_buffer.append":
		err = decodeAudio(w.Audio, ev)
	case "response.create":
		if ev.Response, err = decodeObject(w.Response, "response", false); err == nil {
			err = checkResponseParams(ev.Response)
		}
	case "input_audio_buffer.commit", "input_audio_buffer.clear", "response.cancel", "output_audio_buffer.clear":
	default:
		err = core.ErrInvalidValue("type", fmt.Sprintf("Invalid value: '%s'. Supported values are: '%s'.",
			ev.Type, strings.Join(clientEventTypes(), "', '")))
	}
	return ev, err
}

func ErrInvalidEventJSON(err error) *core.APIError {
	return &core.APIError{Status: 400, Type: "invalid_request_error", Code: "invalid_json",
		Message: "Invalid JSON: the event could not be parsed (" + err.Error() + ")."}
}

// decodeObject decodes an object-valued field; absent is an error only when
// required.
func decodeObject(raw json.RawMessage, param string, required bool) (map[string]any, *core.APIError) {
	if len(raw) == 0 || string(raw) == "null" {
		if required {
			return nil, core.ErrMissingParam(param)
		}
		return nil, nil
	}
	var m map[string]any
	if raw[0] != '{' || json.Unmarshal(raw, &m) != nil {
		return nil, core.ErrInvalidType(param, "an object", core.JSONKind(raw))
	}
	return m, nil
}

func needItemID(ev *clientEvent) *core.APIError {
	if ev.ItemID == "" {
		return core.ErrMissingParam("item_id")
	}
	return nil
}

func decodeAudio(audio *string, ev *clientEvent) *core.APIError {
	if audio == nil {
		return core.ErrMissingParam("audio")
	}
	n, err := base64.StdEncoding.DecodeString(*audio)
	if err != nil {
		return core.ErrInvalidValue("audio", "Invalid 'audio': expected base64-encoded audio bytes.")
	}
	ev.AudioBytes = len(n)
	return nil
}

// wireItem is a conversation item as a client sends it.
type wireItem struct {
	ID      string `json:"id"`
	Type    string `json:"type"`
	Role    string `json:"role"`
	Content []struct {
		Type       string `json:"type"`
		Text       string `json:"text"`
		Transcript string `json:"transcript"`
	} `json:"content"`
	CallID    string  `json:"call_id"`
	Name      string  `json:"name"`
	Arguments *string `json:"arguments"`
	Output    *string `json:"output"`
}

// decodeItem checks a conversation.item.create item and renders it as the
// server will echo it.
func decodeItem(raw json.RawMessage) (*rtItem, string, *core.APIError) {
	if _, err := decodeObject(raw, "item", true); err != nil {
		return nil, "", err
	}
	var w wireItem
	if err := json.Unmarshal(raw, &w); err != nil {
		if e, ok := core.JSONError(err, "item").(*core.APIError); ok {
			return nil, "", e
		}
		return nil, "", core.ErrInvalidType("item", "an object", core.JSONKind(raw))
	}
	it := &rtItem{ID: w.ID, Object: "realtime.item", Type: w.Type, Status: "completed"}
	if it.ID == "" {
		it.ID = "item_" + core.RandomID()[:21]
	}
	var text strings.Builder
	switch w.Type {
	case "message":
		parts, ok := map[string][]string{"user": {"input_text", "input_audio", "input_image"},
			"system": {"input_text"}, "assistant": {"output_text", "output_audio"}}[w.Role]
		if !ok {
			return nil, "", core.ErrInvalidValue("item.role", fmt.Sprintf("Invalid value: '%s'. Supported values are: 'user', 'system' and 'assistant'.", w.Role))
		}
		it.Role = w.Role
		it.Content = []rtContent{}
		for i, c := range w.Content {
			if !openai.Contains(parts, c.Type) {
				return nil, "", core.ErrInvalidValue(fmt.Sprintf("item.content[%d].type", i),
					fmt.Sprintf("Invalid value: '%s'. Supported values are: '%s'.", c.Type, strings.Join(parts, "', '")))
			}
			part := rtContent{Type: c.Type}
			switch c.Type {
			case "input_text", "output_text":
				part.Text = Ptr(c.Text)
				text.WriteString(c.Text)
			case "output_audio", "input_audio":
				part.Transcript = Ptr(c.Transcript)
				text.WriteString(c.Transcript)
			}
			it.Content = append(it.Content, part)
		}
	case "function_call_output":
		if w.CallID == "" {
			return nil, "", core.ErrMissingParam("item.call_id")
		}
		if err := checkCallID(w.CallID); err != nil {
			return nil, "", err
		}
		if w.Output == nil {
			return nil, "", core.ErrMissingParam("item.output")
		}
		it.CallID, it.Output = w.CallID, w.Output
	case "function_call":
		if w.Name == "" {
			return nil, "", core.ErrMissingParam("item.name")
		}
		if w.Arguments == nil {
			return nil, "", core.ErrMissingParam("item.arguments")
		}
		it.CallID, it.Name, it.Arguments = w.CallID, w.Name, w.Arguments
		if it.CallID == "" {
			it.CallID = "call_" + core.RandomID()[:16]
		} else if err := checkCallID(it.CallID); err != nil {
			return nil, "", err
		}
	case "":
		return nil, "", core.ErrMissingParam("item.type")
	default:
		return nil, "", core.ErrInvalidValue("item.type", fmt.Sprintf("Invalid value: '%s'. Supported values are: 'message', 'function_call' and 'function_call_output'.", w.Type))
	}
	return it, text.String(), nil
}

// callIDPattern is what the API accepts as a function call id.
var callIDPattern = regexp.MustCompile(`^[a-zA-Z0-9_-]+$`)

func checkCallID(id string) *core.APIError {
	if callIDPattern.MatchString(id) {
		return nil
	}
	return core.ErrInvalidValue("item.call_id", "Invalid 'item.call_id': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.")
}
