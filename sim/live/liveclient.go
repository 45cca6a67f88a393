package live

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/voxgate/voxgate/sim/core"
	"github.com/voxgate/voxgate/sim/openai"
	"github.com/voxgate/voxgate/sim/realtime"
)

// liveClientEvent is a Live client event, decoded and checked. Only the
// fields its type uses are set.
type liveClientEvent struct {
	Type    string
	EventID string
	// Appends: the delegation (nil: the explicit null, session-wide) and
	// the content.
	DelegationID *string
	Content      string
	// session.update: the new acknowledgement delay, when it sets one.
	AckDelayMS *int64
}

// maxAppendTokens is the most an append may carry (openai-go's docs: "limited
// to 500 tokens"), counted as the simulator counts all text (openai.TokensFor).
const maxAppendTokens = 500

// liveAppends are the append commands and the event that acknowledges each.
var liveAppends = map[string]string{
	"session.instructions.append": "session.instructions.appended",
	"session.thinking.append":     "session.thinking.appended",
	"session.commentary.append":   "session.commentary.appended",
}

// liveImmutable are the session fields fixed at start: a session.update
// naming one gets immutable_field_update.
var liveImmutable = []string{"model", "instructions", "audio", "input", "client"}

// decodeLiveClientEvent parses one client event from a data channel or a
// sideband. Like the config, events are strict: unknown properties are
// refused by path. On refusal it returns the error to send back and
// whatever type and event_id it could read.
func decodeLiveClientEvent(data []byte) (*liveClientEvent, *core.APIError) {
	ev := &liveClientEvent{}
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil || m == nil || dec.More() {
		if err == nil {
			err = fmt.Errorf("want one JSON object")
		}
		return ev, realtime.ErrInvalidEventJSON(err)
	}
	ev.EventID, _ = m["event_id"].(string)
	typ, apiErr := str(m, "type", "type", true)
	if apiErr != nil {
		return ev, apiErr
	}
	ev.Type = typ
	if _, ok := m["event_id"]; ok {
		if _, isStr := m["event_id"].(string); !isStr {
			return ev, core.ErrInvalidType("event_id", "a string", realtime.KindOf(m["event_id"]))
		}
	}
	switch {
	case typ == "session.close", typ == "session.input_audio.mute", typ == "session.input_audio.unmute":
		return ev, realtime.CheckFields(m, realtime.Leaves("type", "event_id"), "")
	case liveAppends[typ] != "":
		return ev, ev.decodeAppend(m)
	case typ == "session.update":
		return ev, ev.decodeUpdate(m)
	case slices.Contains(liveClientEventTypes(), typ):
		return ev, core.ErrInvalidValue("type", fmt.Sprintf("The simulator does not serve '%s' on a WebRTC session with client delegation.", typ))
	}
	return ev, core.ErrInvalidValue("type", fmt.Sprintf("Invalid value: '%s'. Not a Live client event.", typ))
}

func (ev *liveClientEvent) decodeAppend(m map[string]any) *core.APIError {
	if err := realtime.CheckFields(m, realtime.Leaves("type", "event_id", "delegation_id", "content"), ""); err != nil {
		return err
	}
	id, ok := m["delegation_id"]
	if !ok {
		// Required, nullable: null means session-wide, absence is an error.
		return core.ErrMissingParam("delegation_id")
	}
	if id != nil {
		s, isStr := id.(string)
		if !isStr {
			return core.ErrInvalidType("delegation_id", "a string or null", realtime.KindOf(id))
		}
		ev.DelegationID = &s
	}
	content, err := str(m, "content", "content", false)
	if err != nil {
		return err
	}
	if _, ok := m["content"]; !ok {
		return core.ErrMissingParam("content")
	}
	if n := openai.TokensFor(len(content)); n > maxAppendTokens {
		return core.ErrInvalidValue("content", fmt.Sprintf("Invalid 'content': at most %d tokens, got %d.", maxAppendTokens, n))
	}
	ev.Content = content
	return nil
}

func (ev *liveClientEvent) decodeUpdate(m map[string]any) *core.APIError {
	sess, err := object(m, "session", "session", true)
	if err != nil {
		return err
	}
	for _, f := range liveImmutable {
		if _, ok := sess[f]; ok {
			return errImmutable("session." + f)
		}
	}
	set := realtime.FieldSet{"type": nil, "event_id": nil,
		"session": realtime.FieldSet{"delegation": realtime.Leaves("type", "acknowledgement_delay_ms"), "triggers": nil}}
	if err := realtime.CheckFields(m, set, ""); err != nil {
		return err
	}
	d, err := object(sess, "delegation", "session.delegation", false)
	if err != nil || d == nil {
		return err
	}
	if t, ok := d["type"]; ok && t != "client" {
		return errImmutable("session.delegation.type")
	}
	if v, ok := d["acknowledgement_delay_ms"]; ok {
		n, isNum := v.(json.Number)
		ms, convErr := n.Int64()
		if !isNum || convErr != nil {
			return core.ErrInvalidType("session.delegation.acknowledgement_delay_ms", "an integer", realtime.KindOf(v))
		}
		if ms < 0 {
			return core.ErrInvalidValue("session.delegation.acknowledgement_delay_ms", "Invalid 'session.delegation.acknowledgement_delay_ms': must not be negative.")
		}
		ev.AckDelayMS = &ms
	}
	return nil
}

func errImmutable(param string) *core.APIError {
	return &core.APIError{Status: 400, Type: "invalid_request_error", Code: "immutable_field_update", Param: param,
		Message: fmt.Sprintf("'%s' cannot be changed after the session has started.", param)}
}

// errNotAllowed refuses a phone's event its data-channel allowlist leaves out.
func errNotAllowed(typ string) *core.APIError {
	return &core.APIError{Status: 400, Type: "invalid_request_error", Code: "client_event_not_allowed", Param: "type",
		Message: fmt.Sprintf("The client event '%s' is not allowed on this data channel.", typ)}
}

func errUnknownDelegation(id string) *core.APIError {
	return core.ErrInvalidValue("delegation_id", fmt.Sprintf("Invalid 'delegation_id': no delegation '%s' in this session.", id))
}
