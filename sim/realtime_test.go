package sim_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/voxgate/voxgate/internal/testkit"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// TestRealtimeCall runs the scripted voice turn over a real pion call in
// both content-type variants: session.created, audio echoed, the tool call
// after 50 packets, the answer over the data channel, then the spoken reply
// with usage matching the deterministic counts.
func TestRealtimeCall(t *testing.T) {
	t.Parallel()
	for _, variant := range []string{"sdp+ephemeral", "multipart+apikey"} {
		t.Run(variant, func(t *testing.T) {
			t.Parallel()
			s, base := newRealtimeSim(t, sim.Realtime{})
			ctx := testCtx(t)
			c, id := dialCall(t, ctx, base, variant)
			created, _ := expect(t, ctx, c, "session.created")
			var sc struct {
				Session struct {
					Instructions string `json:"instructions"`
					Tools        []any  `json:"tools"`
				} `json:"session"`
			}
			if err := json.Unmarshal(created.Raw, &sc); err != nil || sc.Session.Instructions != testInstructions || len(sc.Session.Tools) != 1 {
				t.Fatalf("session.created = %s, want the configured session", created.Raw)
			}

			if err := c.SendAudio(ctx, 50, 20*time.Millisecond); err != nil {
				t.Fatal(err)
			}
			args, _ := expect(t, ctx, c, "response.function_call_arguments.done")
			var call struct{ CallID, Name, Arguments string }
			_ = json.Unmarshal(args.Raw, &struct {
				CallID    *string `json:"call_id"`
				Name      *string `json:"name"`
				Arguments *string `json:"arguments"`
			}{&call.CallID, &call.Name, &call.Arguments})
			if call.Name != "search_recipes" || call.Arguments != `{"query":"pasta"}` {
				t.Fatalf("tool call = %+v, want search_recipes {\"query\":\"pasta\"}", call)
			}
			first := decodeDone(t, expectEvent(t, ctx, c, "response.done"))
			fixed := recipeBaseBytes()
			want1 := wantUsage{inText: ceil4(fixed), inAudio: 10, outText: ceil4(len(call.Name) + len(call.Arguments))}
			checkUsage(t, first, want1)

			output := `[{"title":"Pasta al pomodoro"}]`
			answer(t, c, call.CallID, output)
			expect(t, ctx, c, "conversation.item.done")
			done, seen := expect(t, ctx, c, "response.done")
			transcript := assertSpoken(t, seen)
			second := decodeDone(t, done)
			checkUsage(t, second, wantUsage{
				inText: ceil4(fixed + len(call.Name) + len(call.Arguments) + len(output)), inAudio: 10,
				cachedText: want1.inText, cachedAudio: 10,
				outText: ceil4(len(transcript)), outAudio: 4, // 200 ms at 20 tokens/s
			})

			if got := c.PacketsReceived(); got < 40 {
				t.Errorf("caller got %d echoed packets back, want about 50", got)
			}
			st, ok := s.Call(id)
			if !ok || st.PacketsIn != 50 || st.ToolCalls != 1 || st.ToolOutputs[sim.PathDataChannel] != 1 || st.Responses != 2 {
				t.Errorf("call stats = %+v, want 50 packets in, 1 tool call answered over the data channel, 2 responses", st)
			}
		})
	}
}

// expectEvent is expect returning only the event.
func expectEvent(t *testing.T, ctx context.Context, s simtest.EventStream, typ string) simtest.Event {
	t.Helper()
	e, _ := expect(t, ctx, s, typ)
	return e
}

// answer sends a function_call_output and response.create.
func answer(t *testing.T, s simtest.EventStream, callID, output string) {
	t.Helper()
	item := map[string]any{"type": "conversation.item.create",
		"item": map[string]any{"type": "function_call_output", "call_id": callID, "output": output}}
	if err := s.Send(item); err != nil {
		t.Fatal(err)
	}
	if err := s.Send(map[string]any{"type": "response.create"}); err != nil {
		t.Fatal(err)
	}
}

// assertSpoken checks the spoken reply's event sequence and returns its
// transcript.
func assertSpoken(t *testing.T, seen []simtest.Event) string {
	t.Helper()
	var deltas, transcript string
	order := []string{}
	for _, e := range seen {
		switch e.Type {
		case "response.output_audio_transcript.delta":
			var d struct{ Delta string }
			_ = json.Unmarshal(e.Raw, &d)
			deltas += d.Delta
		case "response.output_audio_transcript.done":
			var d struct{ Transcript string }
			_ = json.Unmarshal(e.Raw, &d)
			transcript = d.Transcript
		}
		if len(order) == 0 || order[len(order)-1] != e.Type {
			order = append(order, e.Type)
		}
	}
	if transcript == "" || deltas != transcript {
		t.Errorf("transcript deltas %q, done %q: want equal and non-empty", deltas, transcript)
	}
	want := []string{"response.created", "response.output_item.added", "response.content_part.added",
		"response.output_audio_transcript.delta", "output_audio_buffer.started", "response.output_audio_transcript.done",
		"response.output_audio.done", "response.content_part.done", "response.output_item.done"}
	if !subsequence(order, want) {
		t.Errorf("spoken reply events %v, want in order %v", order, want)
	}
	return transcript
}

func subsequence(have, want []string) bool {
	i := 0
	for _, h := range have {
		if i < len(want) && h == want[i] {
			i++
		}
	}
	return i == len(want)
}

// TestSideband opens a sideband socket on a call: it sees the same events
// as the data channel, answers the tool call instead of the app, and hangup
// closes both.
func TestSideband(t *testing.T) {
	t.Parallel()
	s, base := newRealtimeSim(t, sim.Realtime{})
	ctx := testCtx(t)
	c, id := dialCall(t, ctx, base, "multipart+apikey")
	expect(t, ctx, c, "session.created")
	sb, _, err := simtest.DialSocket(ctx, base, simtest.TestKey, "call_id="+id)
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	// A sideband gets no session.created: the gateway sends its config
	// as soon as it is on.
	if err := sb.Send(map[string]any{"type": "session.update", "session": map[string]any{"type": "realtime", "instructions": testInstructions}}); err != nil {
		t.Fatal(err)
	}
	if _, before := expect(t, ctx, sb, "session.updated"); len(before) != 0 {
		t.Errorf("the sideband got %s before its session.updated, want nothing", before[0].Type)
	}
	expect(t, ctx, c, "session.updated")

	if err := c.SendAudio(ctx, 50, 0); err != nil {
		t.Fatal(err)
	}
	dcDone, dcSeen := expect(t, ctx, c, "response.done")
	sbDone, sbSeen := expect(t, ctx, sb, "response.done")
	if len(dcSeen) != len(sbSeen) || string(dcDone.Raw) != string(sbDone.Raw) {
		t.Fatalf("data channel saw %d events, sideband %d; response.done equal: %v", len(dcSeen), len(sbSeen), string(dcDone.Raw) == string(sbDone.Raw))
	}
	for i := range dcSeen {
		if string(dcSeen[i].Raw) != string(sbSeen[i].Raw) {
			t.Fatalf("event %d differs:\n data channel %s\n sideband     %s", i, dcSeen[i].Raw, sbSeen[i].Raw)
		}
	}
	callID := decodeDone(t, dcDone).Response.Output[0].CallID
	answer(t, sb, callID, `{"recipes":[]}`)
	expect(t, ctx, sb, "response.done")
	expect(t, ctx, c, "response.done")
	st, _ := s.Call(id)
	if st.ToolOutputs[sim.PathSideband] != 1 || st.ToolOutputs[sim.PathDataChannel] != 0 || st.Sidebands != 1 {
		t.Errorf("stats = %+v, want the tool call answered over the sideband", st)
	}

	resp, body := do(t, http.MethodPost, base+"/v1/realtime/calls/"+id+"/hangup", simtest.TestKey, "", nil)
	if resp.StatusCode != 200 {
		t.Fatalf("hangup: %d %s", resp.StatusCode, body)
	}
	select {
	case <-c.ChannelClosed():
	case <-ctx.Done():
		t.Fatal("data channel still open after hangup")
	}
	for {
		if _, err := sb.Next(ctx); errors.Is(err, simtest.ErrClosed) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
	}
	var ce *websocket.CloseError
	if err := sb.Err(); !errors.As(err, &ce) || ce.Code != websocket.CloseNormalClosure {
		t.Errorf("sideband ended with %v, want a normal close frame", err)
	}
	if st, _ := s.Call(id); st.Status != "ended" || st.EndReason != "hangup" {
		t.Errorf("after hangup stats = %+v", st)
	}
	resp, _ = do(t, http.MethodPost, base+"/v1/realtime/calls/"+id+"/hangup", simtest.TestKey, "", nil)
	if resp.StatusCode != 404 {
		t.Errorf("second hangup: %d, want 404", resp.StatusCode)
	}
}

// TestRealtimeSilence: in silence mode the track echoes nothing and sends
// exactly reply_audio_ms of Opus silence (one packet per 20 ms) per reply.
func TestRealtimeSilence(t *testing.T) {
	t.Parallel()
	s, base := newRealtimeSim(t, sim.Realtime{Audio: sim.AudioSilence, ReplyAudioMS: 200, TurnPackets: 10})
	ctx := testCtx(t)
	c, id := dialCall(t, ctx, base, "multipart+apikey")
	if err := c.SendAudio(ctx, 10, 0); err != nil {
		t.Fatal(err)
	}
	done := decodeDone(t, expectEvent(t, ctx, c, "response.done"))
	if got := c.PacketsReceived(); got != 0 {
		t.Errorf("caller received %d packets before the model spoke, want 0 (no echo)", got)
	}
	answer(t, c, done.Response.Output[0].CallID, "ok")
	expect(t, ctx, c, "output_audio_buffer.stopped")
	// The last packets may still be in flight.
	testkit.Eventually(t, ctx, "10 packets", func() bool { return c.PacketsReceived() >= 10 })
	if got := c.PacketsReceived(); got != 10 {
		t.Errorf("caller received %d packets, want 10 (200 ms of silence)", got)
	}
	if st, _ := s.Call(id); st.PacketsOut != 10 || st.PacketsIn != 10 {
		t.Errorf("stats packets in/out = %d/%d, want 10/10", st.PacketsIn, st.PacketsOut)
	}
}
