package config

import (
	"strings"
	"testing"
	"time"
)

func TestVoiceAndPricesSections(t *testing.T) {
	t.Parallel()
	cfg, err := Parse([]byte(`
voice:
  model: gpt-realtime-mini
  voices: [marin, cedar]
  transcription_model: ""
  secret_ttl: 30s
  mode: sideband
  idle_timeout: 90s
prices:
  version: "ops-2026-11"
  models:
    gpt-realtime-mini: {source: contract, date: "2026-11-01", text_in: 1}
`))
	if err != nil {
		t.Fatal(err)
	}
	v := cfg.Voice
	if v.Model != "gpt-realtime-mini" || len(v.Voices) != 2 || v.SecretTTL != 30*time.Second ||
		v.TranscriptionModel == nil || *v.TranscriptionModel != "" || v.ContextTool != nil ||
		v.Mode != "sideband" || v.IdleTimeout != 90*time.Second {
		t.Fatalf("voice %+v", v)
	}
	doc, err := cfg.Prices.YAML()
	if err != nil || !strings.Contains(string(doc), "ops-2026-11") || !strings.Contains(string(doc), "text_in: 1") {
		t.Fatalf("prices %q, %v", doc, err)
	}
	if doc, err := Default().Prices.YAML(); doc != nil || err != nil {
		t.Fatalf("no override: %q, %v", doc, err)
	}
	for _, bad := range []string{"voice:\n  modle: x\n", "prices: [1, 2]\n", "voice:\n  secret_ttl: soon\n"} {
		if _, err := Parse([]byte(bad)); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
