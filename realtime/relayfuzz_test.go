package realtime

import (
	"encoding/json"
	"testing"
)

// The refusal reads a peer's message, which may be anything: it always
// answers one small, well-formed error event that never carries more than
// a bounded piece of the message.
func FuzzRefusal(f *testing.F) {
	for _, s := range []string{`{"type":"session.update","event_id":"evt_1","session":{}}`, `{"type":1}`, `not json`, ``,
		`{"type":"` + string(make([]byte, 200)) + `"}`, `{"type":"a\"b","event_id":"\u2028"}`, `[1,2]`} {
		f.Add([]byte(s), 8192, true)
	}
	f.Fuzz(func(t *testing.T, msg []byte, limit int, toProvider bool) {
		to := LegPhone
		if toProvider {
			to = LegProvider
		}
		out := refusal(msg, limit, to)
		var ev struct {
			Type  string `json:"type"`
			Error struct {
				Type, Code, Message string
				EventID             *string `json:"event_id"`
			} `json:"error"`
		}
		if err := json.Unmarshal(out, &ev); err != nil {
			t.Fatalf("refusal %q is not JSON: %v", out, err)
		}
		if ev.Type != "error" || ev.Error.Code != "event_too_large" || ev.Error.Message == "" {
			t.Fatalf("refusal %s", out)
		}
		if len(out) > 600 {
			t.Fatalf("refusal of %d bytes for a %d-byte message", len(out), len(msg))
		}
		if ev.Error.EventID != nil && to == LegPhone {
			t.Fatalf("a server event's id in the refusal: %s", out)
		}
	})
}
