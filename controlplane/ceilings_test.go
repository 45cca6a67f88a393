package controlplane_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/voxgate/voxgate/controlplane"
	"github.com/voxgate/voxgate/internal/config"
)

// A direct-mode app reports its own usage: what no session of that length
// could produce is 422, the session stays open and is not charged, and an
// honest report then ends it. Each class has its own per-second bound.
func TestDirectUsageCeilings(t *testing.T) {
	t.Parallel()
	f := newFixture(t, options{configFn: func(c *config.Voice) {
		c.UsageCeilings = map[string]int64{"transcription.audio_ms": 500}
	}})
	p := newUser(t, "pro")
	start := mustStart(t, f, p, `{}`)
	huge := `{"usage":{"input_tokens":1000000000000,"output_tokens":1000000000000,
		"input_token_details":{"text_tokens":1000000000000,"audio_tokens":1000000000000,"image_tokens":1000000000000},
		"output_token_details":{"text_tokens":1000000000000,"audio_tokens":1000000000000}}}`
	for _, tc := range []struct{ name, body, class string }{
		{"every class at 10^12", huge, "text_in"},
		{"audio out", `{"usage":{"output_token_details":{"audio_tokens":4500}}}`, "audio_out"},
		{"transcription seconds (configured 500 ms/s)", `{"usage":{"transcription":{"type":"duration","seconds":6.5}}}`, "transcription.audio_ms"},
	} {
		w := call(t, f.svc.HandleEnd, p, "POST", "/", []byte(tc.body), start.SessionID)
		if w.Code != http.StatusUnprocessableEntity || !strings.Contains(w.Body.String(), tc.class) {
			t.Errorf("%s: %d %s, want 422 naming %s", tc.name, w.Code, w.Body, tc.class)
		}
	}
	if s := decode[controlplane.Session](t, call(t, f.svc.HandleGet, p, "GET", "/", nil, start.SessionID)); !s.Active() {
		t.Fatalf("a refused end ended the session: %+v", s)
	}
	w := call(t, f.svc.HandleEnd, p, "POST", "/", []byte(`{"usage":{"output_token_details":{"audio_tokens":3900},"transcription":{"type":"duration","seconds":4.9}}}`), start.SessionID)
	if w.Code != http.StatusOK {
		t.Fatalf("honest end: %d %s", w.Code, w.Body)
	}
	if rec := decode[controlplane.Session](t, w).Cost; rec == nil || rec.Tokens.AudioOut != 3900 || rec.Tokens.TranscriptionAudioMS != 4900 {
		t.Fatalf("record %+v", rec)
	}
}

func TestCeilingsSet(t *testing.T) {
	t.Parallel()
	c := controlplane.DefaultCeilings()
	for _, bad := range []struct {
		name string
		n    int64
	}{{"vibes", 1}, {"transcription.vibes", 1}, {"text_in", 0}, {"audio_out", 2_000_000}} {
		if err := c.Set(bad.name, bad.n); err == nil {
			t.Errorf("Set(%q, %d): no error", bad.name, bad.n)
		}
	}
	if err := c.Set("transcription.audio_ms", 7); err != nil || c.Transcription.AudioMillis != 7 {
		t.Errorf("Set transcription.audio_ms: %v, %+v", err, c.Transcription)
	}
}
