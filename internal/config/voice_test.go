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
		v.TranscriptionModel != "" || v.ContextTool != nil ||
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

// voice.context_tool is the file's when it names one ("" for none), else
// the demo's profile tool while the demo is on; chat reads the same.
func TestContextTool(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		yaml string
		demo bool
		want string
	}{
		{"nothing said, no demo", "", false, ""},
		{"nothing said, the demo on", "", true, "get_profile"},
		{"a tool named", "voice:\n  context_tool: my_profile\n", true, "my_profile"},
		{"none, the demo on", "voice:\n  context_tool: \"\"\n", true, ""},
	}
	for _, tc := range cases {
		cfg, err := Parse([]byte(tc.yaml))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		cfg.Demo.Enabled = tc.demo // as VOXGATE_DEMO or voxgate dev sets it, after the file
		if got := cfg.ContextTool(); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}

// A key left out keeps its default; a key given is taken as written, zero
// included.
func TestVoiceLiveDefaults(t *testing.T) {
	t.Parallel()
	cfg, err := Parse([]byte("voice:\n  live:\n    delegation_deadline: 5s\n"))
	if err != nil {
		t.Fatal(err)
	}
	l := cfg.Voice.Live
	if l.DelegationDeadline != 5*time.Second || l.Model != "gpt-live-1.1" || l.AcknowledgementDelay != 400*time.Millisecond ||
		!strings.HasPrefix(l.BackendInstructions, "You are the backend of a voice assistant") {
		t.Fatalf("voice.live %+v: want the deadline given and the other defaults kept", l)
	}
	if _, err := Parse([]byte("voice:\n  live:\n    modle: x\n")); err == nil {
		t.Fatal("an unknown voice.live key was accepted")
	}
}

// voice.live.backend_instructions is the app's, like chat.instructions and
// voice.instructions: taken as written, "" included.
func TestVoiceLiveBackendInstructions(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, yaml, want string }{
		{"given", "voice:\n  live:\n    backend_instructions: You run errands for a bike shop.\n", "You run errands for a bike shop."},
		{"given empty", "voice:\n  live:\n    backend_instructions: \"\"\n", ""},
		{"left out", "", DefaultVoice().Live.BackendInstructions},
	} {
		cfg, err := Parse([]byte(tc.yaml))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := cfg.Voice.Live.BackendInstructions; got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestVoiceAndChatDefaults(t *testing.T) {
	t.Parallel()
	cfg, err := Parse([]byte("voice:\n  vad_idle_timeout: 0s\n  model: gpt-realtime-mini\nchat:\n  max_output_tokens: 0\n  turn_timeout: 30s\n"))
	if err != nil {
		t.Fatal(err)
	}
	v, c := cfg.Voice, cfg.Chat
	for _, tc := range []struct {
		name      string
		got, want any
	}{
		{"voice.model given", v.Model, "gpt-realtime-mini"},
		{"voice.vad_idle_timeout given as 0", v.VADIdleTimeout, time.Duration(0)},
		{"voice.idle_timeout left out", v.IdleTimeout, DefaultVoice().IdleTimeout},
		{"voice.transcription_model left out", v.TranscriptionModel, "gpt-live-transcribe"},
		{"chat.turn_timeout given", c.TurnTimeout, 30 * time.Second},
		{"chat.model left out", c.Model, "gpt-6-luna"},
		{"chat.retention_days left out", c.RetentionDays, 90},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, tc.got, tc.want)
		}
	}
}

// voice.relay is read as written; a credential in the file is an unknown
// key (it comes from VOXGATE_TURN_CREDENTIAL only).
func TestVoiceRelaySection(t *testing.T) {
	t.Parallel()
	cfg, err := Parse([]byte(`
voice:
  mode: relay
  relay:
    udp_addr: "0.0.0.0:3478"
    udp_sockets: 4
    tcp_addr: ":443"
    public_ips: [203.0.113.7]
    port_min: 40000
    port_max: 40100
    turn:
      - urls: ["turns:turn.example.com:443?transport=tcp"]
        username: voxgate
`))
	if err != nil {
		t.Fatal(err)
	}
	r := cfg.Voice.Relay
	if cfg.Voice.Mode != "relay" || r.UDPAddr != "0.0.0.0:3478" || r.UDPSockets != 4 || r.TCPAddr != ":443" || len(r.PublicIPs) != 1 ||
		r.PortMin != 40000 || r.PortMax != 40100 || len(r.TURN) != 1 || r.TURN[0].Username != "voxgate" || r.Loopback {
		t.Fatalf("relay %+v", r)
	}
	if _, err := Parse([]byte("voice:\n  relay:\n    turn:\n      - urls: [turn:x]\n        credential: s3cret\n")); err == nil {
		t.Fatal("a TURN credential in the file was accepted")
	}
}
