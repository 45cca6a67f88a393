package sim_test

import (
	"testing"
	"time"

	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// TestRealtimeVADOrder: server VAD sends speech_started at a turn's first
// packet, speech_stopped once the configured silence_duration_ms has passed
// after its speech, then committed; with interrupt_response, the first
// packet of the next turn (after barge_in_packets of listening) cuts the
// reply and cancels the response then.
func TestRealtimeVADOrder(t *testing.T) {
	t.Parallel()
	_, base := newRealtimeSim(t, sim.Realtime{TurnPackets: 25, ReplyAudioMS: 2000, GenerationMS: 3000, BargeInPackets: 40})
	ctx := testCtx(t)
	c := simtest.NewCaller(t)
	session := `{"type":"realtime","audio":{"input":{"turn_detection":{"type":"server_vad","silence_duration_ms":400}}}}`
	if _, err := c.DialMultipart(ctx, base, simtest.TestKey, session); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitOpen(ctx); err != nil {
		t.Fatal(err)
	}
	expect(t, ctx, c, "session.created")

	start := time.Now()
	mic := make(chan error, 1)
	go func() { mic <- c.SendAudio(ctx, 60, 20*time.Millisecond) }() // 0.5 s of speech, then 0.7 s of "silence"
	at := map[string]time.Duration{}
	var order []simtest.Event
	for _, typ := range []string{"input_audio_buffer.speech_started", "input_audio_buffer.speech_stopped", "input_audio_buffer.committed"} {
		e, seen := expect(t, ctx, c, typ)
		at[typ] = time.Since(start)
		order = append(append(order, seen...), e)
	}
	if d := at["input_audio_buffer.speech_started"]; d > 300*time.Millisecond {
		t.Errorf("speech_started after %v, want at the first packet", d)
	}
	if d := at["input_audio_buffer.speech_stopped"]; d < 850*time.Millisecond {
		t.Errorf("speech_stopped after %v, want after 0.5 s of speech and 0.4 s of silence", d)
	}
	started, stopped := order[0].Map(), eventOf(t, order, "input_audio_buffer.speech_stopped").Map()
	if started["audio_start_ms"] != 0.0 || stopped["audio_end_ms"] != 500.0 || started["item_id"] != stopped["item_id"] {
		t.Errorf("speech_started %v, speech_stopped %v: want 0 → 500 ms for one item", started, stopped)
	}
	if committed := order[len(order)-1].Map(); committed["item_id"] != started["item_id"] {
		t.Errorf("committed %v, want the speech's item", committed)
	}
	added := expectEvent(t, ctx, c, "conversation.item.added")
	if itemID(added) != started["item_id"] {
		t.Errorf("conversation.item.added %s, want the committed item", added.Raw)
	}
	if err := <-mic; err != nil {
		t.Fatal(err)
	}

	// The reply is still generating and playing. The user listens to it
	// (the mic's packets after the commit, then 40 more in all), then
	// speaks over it: the next turn's first packet interrupts it.
	expect(t, ctx, c, "output_audio_buffer.started")
	if err := c.SendAudio(ctx, 41, 0); err != nil {
		t.Fatal(err)
	}
	done, seen := expect(t, ctx, c, "response.done")
	if got := decodeOutcome(t, done); got.Status != "cancelled" || got.Details == nil || got.Details.Reason != "turn_detected" {
		t.Errorf("response after barge-in: %+v, want cancelled/turn_detected", got)
	}
	if !subsequence(types(seen), []string{"input_audio_buffer.speech_started", "output_audio_buffer.cleared"}) ||
		hasType(seen, "input_audio_buffer.speech_stopped") {
		t.Errorf("barge-in events %v, want speech_started then the reply cut, before any speech_stopped", types(seen))
	}
}

// TestRealtimeContinuousMic: a caller that streams packets without pause,
// as a muted microphone does, makes one turn at a time: the simulated user
// listens while the model answers, so no response is cut by the stream's
// next packets.
func TestRealtimeContinuousMic(t *testing.T) {
	t.Parallel()
	_, base := newRealtimeSim(t, sim.Realtime{TurnPackets: 10, ReplyAudioMS: 300, GenerationMS: 100})
	ctx := testCtx(t)
	c, _ := dialCall(t, ctx, base, "multipart+apikey")
	if err := c.SendAudio(ctx, 150, 20*time.Millisecond); err != nil { // 3 s
		t.Fatal(err)
	}
	var done []outcome
	for {
		e, err := c.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if e.Type == "response.done" {
			done = append(done, decodeOutcome(t, e))
		}
		if e.Type == "input_audio_buffer.speech_started" && len(done) >= 2 {
			break
		}
	}
	for i, o := range done {
		if o.Status != "completed" {
			t.Errorf("response %d: %+v, want completed: the stream must not interrupt it", i, o)
		}
	}
}
