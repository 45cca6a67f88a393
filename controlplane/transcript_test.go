package controlplane_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/voxgate/voxgate/controlplane"
	"github.com/voxgate/voxgate/internal/testkit"
	"github.com/voxgate/voxgate/sim"
)

// In sideband mode the model's spoken answers pass the medical-claim and
// PII detectors after the fact, in English and in Spanish (the language
// read from the answer: a voice session knows none): the simulated model
// says a claim, and the session shows the flag (GET
// /v1/voice/sessions/{id}), as does the metric; the text itself is kept
// nowhere.
func TestSidebandTranscriptFlagged(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ lang, claim, word string }{
		{"en", "Turmeric cures arthritis, so take a spoon a day.", "Turmeric"},
		{"es", "La cúrcuma cura la artritis, así que toma una cucharada al día.", "cúrcuma"},
	} {
		t.Run(tc.lang, func(t *testing.T) {
			t.Parallel()
			transcriptFlagged(t, tc.claim, tc.word)
		})
	}
}

func transcriptFlagged(t *testing.T, claim, word string) {
	reg := prometheus.NewRegistry()
	f := newFixture(t, options{registry: reg, simCfg: sim.Config{
		Script:   sim.Script{Rules: []sim.Rule{{Name: "claim", Reply: sim.Reply{Text: claim}}}},
		Realtime: sim.Realtime{ReplyAudioMS: 200, GenerationMS: 50}}})
	p := newUser(t, "pro")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start, phone, _ := sidebandCall(t, ctx, f, p)
	if err := phone.SendAudio(ctx, 75, 20*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	for {
		ev, err := phone.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == "response.done" {
			break
		}
	}
	var got controlplane.Session
	testkit.Eventually(t, ctx, "the session to show the flag", func() bool {
		got = decode[controlplane.Session](t, call(t, f.svc.HandleGet, p, "GET", "/", nil, start.SessionID))
		return len(got.SafetyFlags) > 0
	})
	if fl := got.SafetyFlags[0]; fl.Type != "medical_claim" || fl.Blocked || strings.Contains(fl.Message, word) {
		t.Fatalf("flags %+v", got.SafetyFlags)
	}
	if n := counterValue(t, reg, "voxgate_voice_transcript_flags_total", "medical_claim"); n < 1 {
		t.Fatalf("metric %v, want ≥ 1", n)
	}
	var stored string
	if err := f.pool.QueryRow(ctx, `SELECT safety_flags::text FROM voice_sessions WHERE id = $1`, start.SessionID).Scan(&stored); err != nil ||
		strings.Contains(stored, word) {
		t.Fatalf("stored flags %q (%v)", stored, err)
	}
	// The audit log has the answer as flagged, with its rule ids and the
	// transcript's hash, never its text.
	var kind, status, rules, hash string
	if err := f.pool.QueryRow(ctx, `SELECT kind, status, rule_ids::text, output_hash FROM ai_audit_log
		WHERE session_id = $1 AND kind = 'voice_answer'`, start.SessionID).Scan(&kind, &status, &rules, &hash); err != nil {
		t.Fatalf("the flagged answer's audit row: %v", err)
	}
	if status != "flagged" || !strings.Contains(rules, "medical.") || len(hash) != 64 {
		t.Fatalf("audit row %s %s %s %q, want flagged with a medical rule and a hash", kind, status, rules, hash)
	}
	call(t, f.svc.HandleEnd, p, "POST", "/", []byte(`{"reason":"user_hangup"}`), start.SessionID)
}

// counterValue is the value of the named counter with one label value.
func counterValue(t *testing.T, reg *prometheus.Registry, name, label string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetValue() == label {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	t.Fatalf("no %s{%s}", name, label)
	return 0
}
