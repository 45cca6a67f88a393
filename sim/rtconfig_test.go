package sim_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/voxgate/voxgate/sim"
)

// TestLoadRealtimeConfig: every realtime key reads from YAML, durations as
// Go durations; negative values are refused.
func TestLoadRealtimeConfig(t *testing.T) {
	t.Parallel()
	load := func(yaml string) (sim.Config, error) {
		path := filepath.Join(t.TempDir(), "sim.yaml")
		if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
			t.Fatal(err)
		}
		return sim.LoadConfig(path)
	}
	cfg, err := load(`realtime:
  audio: silence
  turn_packets: 25
  barge_in_packets: 10
  reply_audio_ms: 800
  generation_ms: 150
  delta_bytes: 8
  max_session: 90s
  close_sideband_with_peer: true
  transcript_after_response: true
  lax_auth: true
`)
	if err != nil {
		t.Fatal(err)
	}
	want := sim.Realtime{Audio: sim.AudioSilence, TurnPackets: 25, BargeInPackets: 10, ReplyAudioMS: 800, GenerationMS: 150,
		DeltaBytes: 8, MaxSession: 90 * time.Second, CloseSidebandWithPeer: true, TranscriptAfterResponse: true, LaxAuth: true}
	if cfg.Realtime != want {
		t.Errorf("realtime = %+v, want %+v", cfg.Realtime, want)
	}
	if _, err := sim.New(cfg); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"realtime: {max_session: -1s}\n", "realtime: {generation_ms: -1}\n", "realtime: {barge_in_packets: -2}\n"} {
		if _, err := load(bad); err == nil || !strings.Contains(err.Error(), "negative") {
			t.Errorf("%q: error %v, want a refusal of the negative value", bad, err)
		}
	}
}
