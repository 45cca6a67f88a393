package sim_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/voxgate/voxgate/internal/testkit"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// twoCalls is a script whose every voice turn asks for two tool calls in
// one response, as the Realtime API may.
func twoCalls() sim.Script {
	return sim.Script{Rules: []sim.Rule{{Name: "two", When: sim.When{ToolResults: ptrBool(false)}, Reply: sim.Reply{
		Text:      "Let me look.",
		ToolCalls: []sim.ScriptCall{{Name: "search_recipes", Arguments: map[string]any{"query": "pasta al pomodoro"}}, {Name: "search_recipes", Arguments: map[string]any{"query": "lentil soup"}}}}}}}
}

func ptrBool(b bool) *bool { return &b }

// TestRealtimeCutResponseCalls: a response cancelled while it generates
// still sends its function calls (arguments_done and output_item.done),
// with the arguments written so far and status incomplete; a completed
// response's calls are completed. Both calls of one response come before
// its response.done, and a response.create sent before it is refused.
func TestRealtimeCutResponseCalls(t *testing.T) {
	t.Parallel()
	s, base := testkit.NewSim(t, sim.Config{Script: twoCalls(), Realtime: sim.Realtime{ReplyAudioMS: 400, GenerationMS: 300}})
	ctx := testCtx(t)
	ws := dialModelSocket(t, base)
	expect(t, ctx, ws, "session.created")
	if err := ws.Send(map[string]any{"type": "session.update", "session": map[string]any{"type": "realtime", "tools": []any{jsonValue(t, recipeToolJSON)}}}); err != nil {
		t.Fatal(err)
	}
	expect(t, ctx, ws, "session.updated")
	turn := func(cancel bool) []simtest.Event {
		t.Helper()
		if err := ws.Send(map[string]any{"type": "conversation.item.create", "item": map[string]any{"type": "message", "role": "user",
			"content": []any{map[string]any{"type": "input_text", "text": "pasta please"}}}}); err != nil {
			t.Fatal(err)
		}
		if err := ws.Send(map[string]any{"type": "response.create"}); err != nil {
			t.Fatal(err)
		}
		expect(t, ctx, ws, "response.created")
		// Too early: the response is still active.
		if err := ws.Send(map[string]any{"type": "response.create"}); err != nil {
			t.Fatal(err)
		}
		if e, _ := expect(t, ctx, ws, "error"); e.Map()["error"].(map[string]any)["code"] != "conversation_already_has_active_response" {
			t.Fatalf("early response.create: %s", e.Raw)
		}
		if cancel {
			if err := ws.Send(map[string]any{"type": "response.cancel"}); err != nil {
				t.Fatal(err)
			}
		}
		done, seen := expect(t, ctx, ws, "response.done")
		return append(seen, done)
	}
	for _, tc := range []struct {
		name         string
		cancel       bool
		status, item string
	}{
		{"completed", false, "completed", "completed"},
		{"cancelled", true, "cancelled", "incomplete"},
	} {
		events := turn(tc.cancel)
		var argsDone, items int
		for _, e := range events {
			m := e.Map()
			switch e.Type {
			case "response.function_call_arguments.done":
				argsDone++
				if args := m["arguments"].(string); tc.cancel == (args == `{"query":"pasta al pomodoro"}` || args == `{"query":"lentil soup"}`) {
					t.Errorf("%s: arguments %q (want them cut only when cancelled)", tc.name, args)
				}
			case "response.output_item.done":
				it := m["item"].(map[string]any)
				if it["type"] == "function_call" {
					items++
					if it["status"] != tc.item {
						t.Errorf("%s: function_call item status %v, want %s", tc.name, it["status"], tc.item)
					}
				}
			}
		}
		if argsDone != 2 || items != 2 {
			t.Errorf("%s: %d arguments_done and %d function_call items, want 2 and 2", tc.name, argsDone, items)
		}
		if st := events[len(events)-1].Map()["response"].(map[string]any)["status"]; st != tc.status {
			t.Errorf("%s: response status %v, want %s", tc.name, st, tc.status)
		}
	}
	_ = s
}

// TestRealtimeIdleTimeout: with server VAD's idle_timeout_ms, a connected
// call whose user is silent gets input_audio_buffer.timeout_triggered (in
// the spec's shape) and a response; once the phone has left, the sideband,
// which stays open, hears nothing more.
func TestRealtimeIdleTimeout(t *testing.T) {
	t.Parallel()
	spec := simtest.Spec(t)
	s, base := newRealtimeSim(t, sim.Realtime{})
	ctx := testCtx(t)
	c, id := dialCall(t, ctx, base, "multipart+apikey")
	expect(t, ctx, c, "session.created")
	const idleMS = 5000 // the API's least
	// The simulator arms the idle timer when it takes the session.update,
	// so the wait is measured from before it is sent: dialling the
	// sideband after it can take a while on a loaded machine.
	began := time.Now()
	if err := c.Send(map[string]any{"type": "session.update", "session": map[string]any{"type": "realtime", "audio": map[string]any{"input": map[string]any{
		"turn_detection": map[string]any{"type": "server_vad", "idle_timeout_ms": idleMS}}}}}); err != nil {
		t.Fatal(err)
	}
	expect(t, ctx, c, "session.updated")
	sb, _, err := simtest.DialSocket(ctx, base, simtest.TestKey, "call_id="+id)
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	onSideband(t, ctx, sb)
	e, _ := expect(t, ctx, sb, "input_audio_buffer.timeout_triggered")
	if took := time.Since(began); took < idleMS*time.Millisecond*9/10 {
		t.Errorf("timeout_triggered after %v, want about %d ms", took, idleMS)
	}
	if err := spec.Validate("RealtimeServerEventInputAudioBufferTimeoutTriggered", e.Raw); err != nil {
		t.Error(err)
	}
	checkOpenAIDecode(t, e)
	expect(t, ctx, sb, "input_audio_buffer.committed")
	expect(t, ctx, sb, "response.done")

	c.Close()
	waitCall(t, s, id, "peer_closed")
	quiet, cancel := context.WithTimeout(ctx, idleMS*time.Millisecond+time.Second)
	defer cancel()
	for {
		e, err := sb.Next(quiet)
		if errors.Is(err, context.DeadlineExceeded) {
			break
		}
		if err != nil {
			t.Fatalf("sideband after the phone left: %v, want it open and quiet", err)
		}
		if e.Type == "input_audio_buffer.timeout_triggered" {
			t.Fatal("timeout_triggered after the phone left")
		}
	}
	if st, _ := s.Call(id); st.IdleTimeouts != 1 {
		t.Errorf("%d idle timeouts, want 1", st.IdleTimeouts)
	}
}

// TestRealtimeEmptyInstructions: empty instructions are replaced by the
// default ones, so a client comparing the session with what it set must
// leave alone what it left empty.
func TestRealtimeEmptyInstructions(t *testing.T) {
	t.Parallel()
	_, base := newRealtimeSim(t, sim.Realtime{Instructions: "Default rules."})
	ctx := testCtx(t)
	ws := dialModelSocket(t, base)
	expect(t, ctx, ws, "session.created")
	if err := ws.Send(map[string]any{"type": "session.update", "session": map[string]any{"type": "realtime", "instructions": ""}}); err != nil {
		t.Fatal(err)
	}
	e, _ := expect(t, ctx, ws, "session.updated")
	if got := e.Map()["session"].(map[string]any)["instructions"]; got != "Default rules." {
		t.Errorf("instructions after setting none: %q, want the default", got)
	}
}
