package live

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"

	"github.com/voxgate/voxgate/sim/core"
	"github.com/voxgate/voxgate/sim/realtime"
)

// liveSettings is a Live session's startup configuration, checked.
type liveSettings struct {
	model        string
	instructions *string
	store        bool
	voice        json.RawMessage
	ackDelayMS   int64
	// allowClient and allowServer are the phone's data-channel allowlists;
	// nil means everything, as when the config leaves them out.
	allowClient map[string]bool
	allowServer map[string]bool
	// Echoed in the session snapshot as the client sent them.
	client, input, triggers json.RawMessage
}

// liveClientEventTypes are the client events of openai-go's
// live.ClientEventUnionParam, the names allowed_client_events may list.
func liveClientEventTypes() []string {
	return []string{"session.start", "session.update", "session.input_audio.append", "session.input_audio.mute",
		"session.input_audio.unmute", "session.output_audio.fixture.play", "session.instructions.append",
		"session.thinking.append", "session.commentary.append", "decision.create", "decision.item.create",
		"decision.item.delete", "response.item.create", "response.create", "session.close", "transport.dtmf.send"}
}

// liveServerEventTypes are the server events of live.ServerEventUnion, the
// types allowed_server_events may select.
func liveServerEventTypes() []string {
	return []string{"session.started", "session.updated", "session.input_audio.muted", "session.input_audio.unmuted",
		"session.output_audio.fixture.playing", "session.output_audio.fixture.played", "session.instructions.appended",
		"session.thinking.appended", "session.commentary.appended", "session.input_audio.append",
		"session.output_audio.delta", "session.input_transcript.delta", "session.output_transcript.delta",
		"session.delegation.created", "decision.event", "decision.item.created", "decision.item.deleted",
		"response.event", "session.usage.updated", "session.closed", "error", "info", "transport.dtmf.received",
		"transport.dtmf.send", "transport.dtmf.sent", "transport.ringing", "transport.answered", "transport.failed"}
}

// liveCreateFields are the properties of LiveNewParams (MediaSessionConfigParam
// and the WebRTC transport). audio.format is absent: WebRTC negotiates its
// format, and the SDK's docs accept it on primary WebSockets only.
func liveCreateFields() realtime.FieldSet {
	return realtime.FieldSet{
		"session": realtime.FieldSet{"model": nil, "instructions": nil, "store": nil,
			"delegation": realtime.Leaves("type", "acknowledgement_delay_ms", "responses", "decisions"),
			"audio":      realtime.FieldSet{"output": realtime.Leaves("voice")},
			"client": realtime.FieldSet{"data_channel": realtime.FieldSet{"allowed_client_events": nil,
				"allowed_server_events": realtime.FieldSet{"[]": realtime.Leaves("type", "response_event")}}},
			"input": nil, "triggers": nil},
		"transport": realtime.Leaves("type", "sdp"),
	}
}

// maxLiveInput is the most starting-history messages a session takes.
const maxLiveInput = 128

// decodeLiveCreate parses and checks a POST /v1/live/sessions body: the
// config is strict, so every property openai-go's params do not define is
// refused by its path.
func decodeLiveCreate(body []byte) (liveSettings, string, *core.APIError) {
	var ls liveSettings
	var top map[string]any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&top); err != nil || dec.More() {
		return ls, "", core.ErrInvalidJSON()
	}
	if top == nil {
		return ls, "", core.ErrInvalidJSON()
	}
	if err := realtime.CheckFields(top, liveCreateFields(), ""); err != nil {
		return ls, "", err
	}
	transport, err := object(top, "transport", "transport", true)
	if err != nil {
		return ls, "", err
	}
	if t, ok := transport["type"]; ok && t != "webrtc" {
		return ls, "", core.ErrInvalidValue("transport.type", "Invalid value for 'transport.type': expected 'webrtc'.")
	}
	offer, err := str(transport, "sdp", "transport.sdp", true)
	if err != nil {
		return ls, "", err
	}
	sess, err := object(top, "session", "session", true)
	if err != nil {
		return ls, "", err
	}
	if ls.model, err = str(sess, "model", "session.model", true); err != nil {
		return ls, "", err
	}
	if _, ok := sess["instructions"]; ok && sess["instructions"] != nil {
		s, err := str(sess, "instructions", "session.instructions", false)
		if err != nil {
			return ls, "", err
		}
		ls.instructions = &s
	}
	if v, ok := sess["store"]; ok {
		b, isBool := v.(bool)
		if !isBool {
			return ls, "", core.ErrInvalidType("session.store", "a boolean", realtime.KindOf(v))
		}
		ls.store = b
	}
	if err := ls.delegation(sess); err != nil {
		return ls, "", err
	}
	ls.voice = json.RawMessage(`"marin"`) // the API's default voice
	if audio, _ := sess["audio"].(map[string]any); audio != nil {
		if out, _ := audio["output"].(map[string]any); out != nil && out["voice"] != nil {
			ls.voice, _ = json.Marshal(out["voice"])
		}
	}
	if err := ls.dataChannel(sess); err != nil {
		return ls, "", err
	}
	if in, ok := sess["input"]; ok {
		list, isList := in.([]any)
		if !isList {
			return ls, "", core.ErrInvalidType("session.input", "an array", realtime.KindOf(in))
		}
		if len(list) > maxLiveInput {
			return ls, "", core.ErrInvalidValue("session.input", fmt.Sprintf("Invalid 'session.input': at most %d messages.", maxLiveInput))
		}
		ls.input, _ = json.Marshal(list)
	}
	if tr, ok := sess["triggers"]; ok {
		if _, isList := tr.([]any); !isList {
			return ls, "", core.ErrInvalidType("session.triggers", "an array", realtime.KindOf(tr))
		}
		ls.triggers, _ = json.Marshal(tr)
	}
	return ls, offer, nil
}

// delegation reads session.delegation: omitted or null is client
// delegation with no acknowledgement delay.
func (ls *liveSettings) delegation(sess map[string]any) *core.APIError {
	raw, ok := sess["delegation"]
	if !ok || raw == nil {
		return nil
	}
	d, isObj := raw.(map[string]any)
	if !isObj {
		return core.ErrInvalidType("session.delegation", "an object", realtime.KindOf(raw))
	}
	switch t := d["type"]; t {
	case nil, "client":
	case "responses", "decisions":
		return core.ErrUnsupportedParam("session.delegation.type",
			"The simulator serves client delegation only: 'responses' and 'decisions' are not simulated.")
	default:
		return core.ErrInvalidValue("session.delegation.type", "Invalid value for 'session.delegation.type': expected 'client', 'responses' or 'decisions'.")
	}
	if v, ok := d["acknowledgement_delay_ms"]; ok {
		n, isNum := v.(json.Number)
		ms, err := n.Int64()
		if !isNum || err != nil {
			return core.ErrInvalidType("session.delegation.acknowledgement_delay_ms", "an integer", realtime.KindOf(v))
		}
		if ms < 0 {
			return core.ErrInvalidValue("session.delegation.acknowledgement_delay_ms", "Invalid 'session.delegation.acknowledgement_delay_ms': must not be negative.")
		}
		ls.ackDelayMS = ms
	}
	return nil
}

// dataChannel reads session.client.data_channel, the phone's allowlists.
func (ls *liveSettings) dataChannel(sess map[string]any) *core.APIError {
	client, ok := sess["client"]
	if !ok {
		return nil
	}
	c, isObj := client.(map[string]any)
	if !isObj {
		return core.ErrInvalidType("session.client", "an object", realtime.KindOf(client))
	}
	dc, err := object(c, "data_channel", "session.client.data_channel", true)
	if err != nil {
		return err
	}
	ls.client, _ = json.Marshal(c)
	const cp, sp = "session.client.data_channel.allowed_client_events", "session.client.data_channel.allowed_server_events"
	if ls.allowClient, err = allowlist(dc["allowed_client_events"], cp, liveClientEventTypes(), func(v any) (string, bool) {
		s, ok := v.(string)
		return s, ok
	}); err != nil {
		return err
	}
	ls.allowServer, err = allowlist(dc["allowed_server_events"], sp, liveServerEventTypes(), func(v any) (string, bool) {
		sel, _ := v.(map[string]any)
		s, ok := sel["type"].(string)
		return s, ok
	})
	return err
}

// allowlist reads "all" (or absence: nil, everything) or a list of known
// event types.
func allowlist(v any, param string, known []string, name func(any) (string, bool)) (map[string]bool, *core.APIError) {
	if v == nil || v == "all" {
		return nil, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, core.ErrInvalidType(param, "'all' or an array", realtime.KindOf(v))
	}
	out := make(map[string]bool, len(list))
	for i, e := range list {
		n, ok := name(e)
		if !ok || !slices.Contains(known, n) {
			return nil, core.ErrInvalidValue(fmt.Sprintf("%s[%d]", param, i),
				fmt.Sprintf("Invalid value for '%s[%d]': not a Live event type.", param, i))
		}
		out[n] = true
	}
	return out, nil
}

func object(m map[string]any, key, param string, required bool) (map[string]any, *core.APIError) {
	v, ok := m[key]
	if !ok || v == nil {
		if required {
			return nil, core.ErrMissingParam(param)
		}
		return nil, nil
	}
	o, isObj := v.(map[string]any)
	if !isObj {
		return nil, core.ErrInvalidType(param, "an object", realtime.KindOf(v))
	}
	return o, nil
}

func str(m map[string]any, key, param string, required bool) (string, *core.APIError) {
	v, ok := m[key]
	if !ok || v == nil {
		if required {
			return "", core.ErrMissingParam(param)
		}
		return "", nil
	}
	s, isStr := v.(string)
	if !isStr {
		return "", core.ErrInvalidType(param, "a string", realtime.KindOf(v))
	}
	if required && s == "" {
		return "", core.ErrMissingParam(param)
	}
	return s, nil
}

// liveCreated is the 201 body of POST /v1/live/sessions (LiveNewResponse).
type liveCreated struct {
	Session struct {
		ID string `json:"id"`
	} `json:"session"`
	Transport struct {
		Type string `json:"type"`
		SDP  string `json:"sdp"`
	} `json:"transport"`
}

func writeLiveCreated(w http.ResponseWriter, id, answer string) {
	var b liveCreated
	b.Session.ID = id
	b.Transport.Type, b.Transport.SDP = "webrtc", answer
	core.WriteJSON(w, http.StatusCreated, b)
}
