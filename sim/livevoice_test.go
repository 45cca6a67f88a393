package sim_test

import (
	"testing"
	"time"

	"github.com/voxgate/voxgate/internal/testkit"
	"github.com/voxgate/voxgate/sim"
)

// TestLiveVoiceOnMediaTrack: what the model says reaches the phone as RTP
// on the media track, as the real API sends its voice, over the span its
// output transcript covers: nothing before it speaks, then at least one 20
// ms Opus frame per 20 ms of speech in real time.
func TestLiveVoiceOnMediaTrack(t *testing.T) {
	t.Parallel()
	// ClockRate 1: the 5 words at 100 ms each are 500 ms of real speech.
	s, base := newLiveSim(t, sim.Live{ClockRate: 1, WordMS: 100,
		Rules: []sim.LiveRule{{When: sim.When{Contains: []string{"pasta"}}, Reply: sim.LiveReply{Text: "Try lemon pasta with peas."}}}})
	ctx := testCtx(t)
	c := dialLive(t, ctx, s, base, defaultParams)
	if n := c.phone.PacketsReceived(); n != 0 {
		t.Fatalf("the phone got %d packets before the model said anything", n)
	}
	if err := c.phone.SendAudio(ctx, 5, 20*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	spoken(t, ctx, c.sb, "Try lemon pasta with peas.")
	var st sim.LiveStats
	testkit.Eventually(t, ctx, "the voice's frames", func() bool {
		st, _ = s.LiveSession(c.id)
		return st.PacketsOut >= 25 && c.phone.PacketsReceived() >= 20
	})
	if st.PacketsOut > 26 {
		t.Errorf("%d frames for 500 ms of speech; want 25", st.PacketsOut)
	}
	t.Logf("sent %d, the phone received %d", st.PacketsOut, c.phone.PacketsReceived())
}
