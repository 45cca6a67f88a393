package controlplane_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/voxgate/voxgate/audit"
	"github.com/voxgate/voxgate/safety"
	"github.com/voxgate/voxgate/tools"
)

// Every voice tool call has its audit row, keyed by session and call id,
// pending from its admission and then final with the tool's outcome:
// success (its arguments and the write guard ran), validation_error for
// arguments that fail the schema or a value out of range, refused for a
// tool voice may not call. The row holds hashes, never the arguments.
func TestVoiceToolAudit(t *testing.T) {
	t.Parallel()
	heart := &tools.Tool{Name: "record_heart_rate", Description: "Records a heart rate.", Voice: true,
		Parameters: json.RawMessage(`{"type":"object","properties":{"bpm":{"type":"number"}},"required":["bpm"]}`),
		Measures:   map[string]string{"bpm": safety.HeartRate},
		Run: func(context.Context, tools.Invocation) (tools.Outcome, error) {
			return tools.Outcome{Data: map[string]any{"saved": true}}, nil
		}}
	f := newFixture(t, options{moreTools: []*tools.Tool{heart}})
	p := newUser(t, "pro")
	s := mustStart(t, f, p, `{}`)
	log := audit.New(f.pool)
	for _, tc := range []struct {
		callID, body string
		code         int
		status       audit.Status
		errCode      string
		ran          int // filters that ran
	}{
		{"c-ok", `{"call_id":"c-ok","name":"echo","arguments":"{\"q\":\"pasta secret\"}"}`, 200, audit.Success, "", 2},
		{"c-schema", `{"call_id":"c-schema","name":"echo","arguments":{"q":7}}`, 422, audit.ValidationError, "TOOL_VALIDATION_ERROR", 0},
		{"c-range", `{"call_id":"c-range","name":"record_heart_rate","arguments":{"bpm":400}}`, 200, audit.ValidationError, "unsafe_value", 2},
		{"c-private", `{"call_id":"c-private","name":"private","arguments":{}}`, 403, audit.Refused, "TOOL_NOT_ALLOWED", 0},
	} {
		w := call(t, f.svc.HandleToolCall, p, "POST", "/", []byte(tc.body), s.SessionID)
		if w.Code != tc.code {
			t.Fatalf("%s: %d %s, want %d", tc.callID, w.Code, w.Body, tc.code)
		}
		r, err := log.Get(context.Background(), audit.VoiceToolID(s.SessionID, tc.callID))
		if err != nil {
			t.Fatalf("%s: %v", tc.callID, err)
		}
		if r.Kind != audit.KindVoiceTool || r.Status != tc.status || r.ErrorCode != tc.errCode || len(r.FiltersRan) != tc.ran ||
			r.UserID != p.UserID || r.CallID != tc.callID || r.InputHash == "" || r.FinishedAt == nil {
			t.Errorf("%s: row %+v, want %s %q with %d filters", tc.callID, r, tc.status, tc.errCode, tc.ran)
		}
		if tc.code == 200 && r.OutputHash == "" {
			t.Errorf("%s: no output hash", tc.callID)
		}
	}
	// A replay of the same call changes nothing.
	if w := call(t, f.svc.HandleToolCall, p, "POST", "/", []byte(`{"call_id":"c-ok","name":"echo","arguments":{"q":"pasta secret"}}`), s.SessionID); w.Code != 200 {
		t.Fatalf("replay: %d %s", w.Code, w.Body)
	}
	var n int
	var raw string
	if err := f.pool.QueryRow(context.Background(), `SELECT count(*), string_agg(row_to_json(a)::text, '') FROM ai_audit_log a
		WHERE session_id = $1`, s.SessionID).Scan(&n, &raw); err != nil {
		t.Fatal(err)
	}
	if n != 4 {
		t.Errorf("%d rows for the session, want 4 (a replay adds none)", n)
	}
	for _, secret := range []string{"pasta", "secret"} { // neither can appear in hex
		if strings.Contains(raw, secret) {
			t.Errorf("an audit row holds %q: the arguments' text, not their hash", secret)
		}
	}
}
