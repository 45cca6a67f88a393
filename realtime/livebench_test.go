package realtime

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3/live"
)

// reflectedEvent is one 100 ms copy of the output audio as the API sends it
// to a sideband: base64 PCM16 mono 24 kHz.
func reflectedEvent() []byte {
	b, _ := json.Marshal(map[string]any{"type": "session.output_audio.delta", "start_ms": 1000, "end_ms": 1100,
		"delta": base64.StdEncoding.EncodeToString(make([]byte, 4800))})
	// encoding/json sorts keys; the API sends type first, as the sim does.
	var ev struct {
		Type    string `json:"type"`
		Delta   string `json:"delta"`
		StartMS int    `json:"start_ms"`
		EndMS   int    `json:"end_ms"`
	}
	_ = json.Unmarshal(b, &ev)
	out, _ := json.Marshal(ev)
	return out
}

// BenchmarkLiveDiscard is the cost of skipping one reflected audio event
// (discard: its type read by eventType, what LiveSideband.Next does) beside decoding it
// with openai-go's union (typed, what Next would otherwise do) and beside
// the one pass openai-go's socket reader already makes over every event to
// read its type (envelope, paid either way).
func BenchmarkLiveDiscard(b *testing.B) {
	raw := reflectedEvent()
	b.Run("discard", func(b *testing.B) {
		b.SetBytes(int64(len(raw)))
		for b.Loop() {
			if !reflectedType(eventType(raw)) {
				b.Fatal("not recognised as reflected audio")
			}
		}
	})
	b.Run("baseline/typed", func(b *testing.B) {
		b.SetBytes(int64(len(raw)))
		for b.Loop() {
			var ev live.ConnectServerEventUnion
			if err := json.Unmarshal(raw, &ev); err != nil || ev.AsOutputAudioDeltaEvent().Delta == "" {
				b.Fatal(err)
			}
		}
	})
	b.Run("baseline/envelope", func(b *testing.B) {
		b.SetBytes(int64(len(raw)))
		for b.Loop() {
			var head struct {
				Type string `json:"type"`
			}
			if err := json.Unmarshal(raw, &head); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// FuzzEventType: for any JSON object with one "type" member, eventType
// agrees with a full decode of its type, and so does the reflected-audio
// check.
func FuzzEventType(f *testing.F) {
	f.Add(reflectedEvent())
	for _, s := range []string{`{"type":"session.input_audio.append","audio":"AAE="}`,
		`{"audio":"AAE=","type":"session.input_audio.append"}`, `{"type":"session.delegation.created"}`,
		`{"type":7}`, `{ "type" : "session.output_audio.delta" }`, `{"type":"session.output_audio.delta","type":"x"}`, `[]`, `{`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var head struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(raw, &head) != nil {
			return // not an event: openai-go's reader refuses it before Next
		}
		if typeMembers(raw) != 1 {
			return
		}
		if got := eventType(raw); got != head.Type {
			t.Fatalf("eventType(%q) = %q, type %q", raw, got, head.Type)
		}
		want := head.Type == "session.input_audio.append" || head.Type == "session.output_audio.delta"
		if got := reflectedType(eventType(raw)); got != want {
			t.Fatalf("reflectedType of %q = %v, type %q", raw, got, head.Type)
		}
	})
}

// typeMembers counts the top-level "type" members of a JSON object, in
// any case: encoding/json matches keys case-insensitively, so "tYpe" is
// one more.
func typeMembers(raw []byte) int {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return 0
	}
	n := 0
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return 0
		}
		if k, ok := k.(string); ok && strings.EqualFold(k, "type") {
			n++
		}
		var v json.RawMessage
		if dec.Decode(&v) != nil {
			return 0
		}
	}
	return n
}

// TestLiveEventDecodesOrSays: an event whose fields do not fit its type
// says so (ok false) instead of coming back as a zero value a holder
// would act on, as a session.closed with no usage read as the final word.
func TestLiveEventDecodesOrSays(t *testing.T) {
	good := LiveEvent{Type: "session.closed", raw: []byte(`{"type":"session.closed","reason":"expired","usage":{"seconds":42.5}}`)}
	if e, ok := good.AsSessionClosedEvent(); !ok || e.Usage.Seconds != 42.5 || e.Reason != "expired" {
		t.Errorf("a good session.closed: %+v, %v", e, ok)
	}
	bad := LiveEvent{Type: "session.closed", raw: []byte(`{"type":"session.closed","usage":{"seconds":"all of them"}}`)}
	if _, ok := bad.AsSessionClosedEvent(); ok {
		t.Error("a session.closed whose seconds are a string decoded as ok")
	}
	d := LiveEvent{Type: "session.delegation.created", raw: []byte(`{"type":"session.delegation.created","delegation":{"id":7}}`)}
	if _, ok := d.AsDelegationCreatedEvent(); ok {
		t.Error("a delegation whose id is a number decoded as ok")
	}
}
