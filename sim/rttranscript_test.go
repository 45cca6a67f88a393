package sim_test

import (
	"context"
	"encoding/base64"
	"slices"
	"strings"
	"testing"

	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// TestRealtimeTranscription: input transcription streams deltas then
// completed, before the response events or (TranscriptAfterResponse) after
// them; a duration-billed model (gpt-transcribe) reports the duration form
// of usage in fractional seconds, other models the tokens form; the
// transcription_failed fault sends .failed instead.
func TestRealtimeTranscription(t *testing.T) {
	t.Parallel()
	spec := simtest.Spec(t)
	for _, after := range []bool{false, true} {
		s, base := newRealtimeSim(t, sim.Realtime{TranscriptAfterResponse: after})
		events := transcriptScenario(t, testCtx(t), s, base)
		for _, e := range events {
			if name, ok := realtimeSchemas()[e.Type]; ok && strings.HasPrefix(e.Type, "conversation.item.input_audio_transcription") {
				if err := spec.Validate(name, stripNulls(t, e.Raw, specExceptions()[e.Type])); err != nil {
					t.Errorf("%s: %v", e.Type, err)
				}
				checkOpenAIDecode(t, e)
			}
		}
		turns := splitTurns(events)
		if len(turns) != 3 {
			t.Fatalf("after=%v: %d turns, want 3", after, len(turns))
		}
		for i, turn := range turns[:2] {
			ty := types(turn)
			completed := slices.Index(ty, "conversation.item.input_audio_transcription.completed")
			created, done := slices.Index(ty, "response.created"), slices.Index(ty, "response.done")
			if completed < 0 || created < 0 || (!after && completed > created) || (after && completed < done) {
				t.Errorf("after=%v, turn %d: %v; want the transcription %s the response", after, i, ty, map[bool]string{false: "before", true: "after"}[after])
			}
			var deltas string
			for _, e := range turn {
				if e.Type == "conversation.item.input_audio_transcription.delta" {
					deltas += e.Map()["delta"].(string)
				}
			}
			tr := turn[completed].Map()
			usage := tr["usage"].(map[string]any)
			if deltas != tr["transcript"] || deltas == "" {
				t.Errorf("deltas %q, transcript %q: want equal", deltas, tr["transcript"])
			}
			wantUsage := map[int]string{0: "tokens", 1: "duration"}[i]
			if usage["type"] != wantUsage || (wantUsage == "duration" && usage["seconds"] != 1.01) ||
				(wantUsage == "tokens" && usage["input_tokens"] != 10.0) {
				t.Errorf("turn %d usage %v, want the %s form for its audio (1 s; 1.01 s on turn 1)", i, usage, wantUsage)
			}
		}
		failed := types(turns[2])
		if !slices.Contains(failed, "conversation.item.input_audio_transcription.failed") ||
			slices.Contains(failed, "conversation.item.input_audio_transcription.completed") {
			t.Errorf("with transcription_failed: %v, want .failed and no .completed", failed)
		}
	}
}

// transcriptScenario runs three audio turns on a socket: 1 s transcribed by
// gpt-4o-transcribe, 1.01 s by gpt-transcribe, then 1 s failing (a fault).
// Each turn ends with its response and transcription.
func transcriptScenario(t *testing.T, ctx context.Context, s *sim.Server, base string) []simtest.Event {
	t.Helper()
	ws := dialModelSocket(t, base)
	expect(t, ctx, ws, "session.created")
	var all []simtest.Event
	for i, model := range []string{"gpt-4o-transcribe", "gpt-transcribe", "gpt-4o-mini-transcribe"} {
		if err := ws.Send(map[string]any{"type": "session.update", "session": map[string]any{"type": "realtime",
			"audio": map[string]any{"input": map[string]any{"transcription": map[string]any{"model": model}}}}}); err != nil {
			t.Fatal(err)
		}
		expect(t, ctx, ws, "session.updated")
		if i == 2 {
			addFault(t, s, sim.Fault{Endpoint: sim.EndpointRealtime, Kind: sim.FaultTranscriptionFailed})
		}
		ms := map[bool]int{false: 1000, true: 1010}[i == 1]
		if err := ws.Send(map[string]any{"type": "input_audio_buffer.append", "audio": base64.StdEncoding.EncodeToString(make([]byte, 48*ms))}); err != nil {
			t.Fatal(err)
		}
		end := "conversation.item.input_audio_transcription.completed"
		if i == 2 {
			end = "conversation.item.input_audio_transcription.failed"
		}
		var seen []simtest.Event
		for _, typ := range []string{"response.done", end} {
			if hasType(seen, typ) {
				continue
			}
			e, more := expect(t, ctx, ws, typ)
			seen = append(append(seen, more...), e)
		}
		all = append(append(all, simtest.Event{Type: "turn"}), seen...)
	}
	return all
}

// splitTurns splits transcriptScenario's events at its "turn" markers.
func splitTurns(events []simtest.Event) [][]simtest.Event {
	var out [][]simtest.Event
	for _, e := range events {
		if e.Type == "turn" {
			out = append(out, nil)
			continue
		}
		out[len(out)-1] = append(out[len(out)-1], e)
	}
	return out
}
