package sim_test

import (
	"encoding/json"
	"testing"

	"github.com/openai/openai-go/v3/realtime"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// TestRealtimeResponseOutcomes: besides completed and cancelled, a response
// ends incomplete (max_output_tokens, from response.create or the session,
// enforced on its usage; the content_filter fault) or failed (the
// response_failed fault, with status_details.error). Every response starts
// with rate_limits.updated right after response.created.
func TestRealtimeResponseOutcomes(t *testing.T) {
	t.Parallel()
	spec := simtest.Spec(t)
	s, base := newRealtimeSim(t, sim.Realtime{})
	ctx := testCtx(t)
	ws := dialModelSocket(t, base)
	expect(t, ctx, ws, "session.created")
	say := func(response map[string]any) (outcome, []simtest.Event) {
		t.Helper()
		if err := ws.Send(map[string]any{"type": "conversation.item.create", "item": map[string]any{"type": "message", "role": "user",
			"content": []any{map[string]any{"type": "input_text", "text": "find me a pasta recipe"}}}}); err != nil {
			t.Fatal(err)
		}
		ev := map[string]any{"type": "response.create"}
		if response != nil {
			ev["response"] = response
		}
		if err := ws.Send(ev); err != nil {
			t.Fatal(err)
		}
		expect(t, ctx, ws, "response.created")
		e, err := ws.Next(ctx)
		if err != nil || e.Type != "rate_limits.updated" {
			t.Fatalf("after response.created: %q (%v), want rate_limits.updated", e.Type, err)
		}
		if err := spec.Validate("RealtimeServerEventRateLimitsUpdated", e.Raw); err != nil {
			t.Error(err)
		}
		var u realtime.RealtimeServerEventUnion
		if err := json.Unmarshal(e.Raw, &u); err != nil || len(u.AsRateLimitsUpdatedEvent().RateLimits) != 2 {
			t.Errorf("openai-go decodes rate_limits.updated as %+v (%v)", u.AsRateLimitsUpdatedEvent(), err)
		}
		done, seen := expect(t, ctx, ws, "response.done")
		if err := spec.Validate("RealtimeServerEventResponseDone", stripNulls(t, done.Raw, []string{"response.status_details"})); err != nil {
			t.Error(err)
		}
		checkOpenAIDecode(t, done)
		return decodeOutcome(t, done), append(seen, done)
	}

	full, _ := say(nil)
	if full.Status != "completed" || full.Details != nil || full.OutTokens < 10 {
		t.Fatalf("plain response: %+v, want completed with a spoken reply", full)
	}

	cut, _ := say(map[string]any{"max_output_tokens": 5})
	if cut.Status != "incomplete" || cut.Details == nil || cut.Details.Reason != "max_output_tokens" ||
		cut.OutTokens > 5 || cut.OutTokens < 1 || cut.ItemStatus != "incomplete" || len(cut.Transcript) >= len(full.Transcript) {
		t.Errorf("max_output_tokens 5: %+v, want incomplete/max_output_tokens with at most 5 output tokens", cut)
	}

	addFault(t, s, sim.Fault{Endpoint: sim.EndpointRealtime, Kind: sim.FaultContentFilter})
	filtered, _ := say(nil)
	if filtered.Status != "incomplete" || filtered.Details == nil || filtered.Details.Reason != "content_filter" ||
		len(filtered.Transcript) != len(full.Transcript)/2 {
		t.Errorf("content_filter: %+v, want incomplete/content_filter with half the transcript", filtered)
	}

	addFault(t, s, sim.Fault{Endpoint: sim.EndpointRealtime, Kind: sim.FaultResponseFailed})
	failed, events := say(nil)
	if failed.Status != "failed" || failed.Details == nil || failed.Details.Type != "failed" || failed.Details.Error == nil ||
		failed.Details.Error.Type == "" || failed.OutTokens != 0 || hasType(events, "response.output_item.added") {
		t.Errorf("response_failed: %+v, want failed with status_details.error and no output", failed)
	}

	// The session's limit applies when response.create sets none; the calls
	// that do not fit are dropped.
	if err := ws.Send(map[string]any{"type": "session.update", "session": map[string]any{"type": "realtime",
		"max_output_tokens": 3, "tools": []any{jsonValue(t, recipeToolJSON)}}}); err != nil {
		t.Fatal(err)
	}
	expect(t, ctx, ws, "session.updated")
	noCall, _ := say(nil)
	if noCall.Status != "incomplete" || noCall.Details.Reason != "max_output_tokens" || noCall.Outputs != 0 {
		t.Errorf("session max_output_tokens 3 against an 8-token call: %+v, want incomplete with no output", noCall)
	}
	// A call that fits in part goes out cut, status incomplete: a client
	// must not run it.
	if err := ws.Send(map[string]any{"type": "session.update", "session": map[string]any{"type": "realtime", "max_output_tokens": 6}}); err != nil {
		t.Fatal(err)
	}
	expect(t, ctx, ws, "session.updated")
	cutCall, _ := say(nil)
	if cutCall.Status != "incomplete" || cutCall.Outputs != 1 || cutCall.ItemStatus != "incomplete" || cutCall.OutTokens > 6 {
		t.Errorf("session max_output_tokens 6 against an 8-token call: %+v, want incomplete with one cut call", cutCall)
	}
}

type outcome struct {
	Status  string
	Details *struct {
		Type   string `json:"type"`
		Reason string `json:"reason"`
		Error  *struct {
			Type string `json:"type"`
			Code string `json:"code"`
		} `json:"error"`
	}
	OutTokens, Outputs     int
	ItemStatus, Transcript string
}

func decodeOutcome(t *testing.T, done simtest.Event) outcome {
	t.Helper()
	var r struct {
		Response struct {
			Status        string
			StatusDetails json.RawMessage `json:"status_details"`
			Output        []struct {
				Status  string
				Content []struct{ Transcript string }
			}
			Usage struct {
				OutputTokens int `json:"output_tokens"`
			}
		}
	}
	if err := json.Unmarshal(done.Raw, &r); err != nil {
		t.Fatal(err)
	}
	o := outcome{Status: r.Response.Status, OutTokens: r.Response.Usage.OutputTokens, Outputs: len(r.Response.Output)}
	if string(r.Response.StatusDetails) != "null" {
		_ = json.Unmarshal(r.Response.StatusDetails, &o.Details)
	}
	if len(r.Response.Output) > 0 {
		o.ItemStatus = r.Response.Output[0].Status
		if c := r.Response.Output[0].Content; len(c) > 0 {
			o.Transcript = c[0].Transcript
		}
	}
	return o
}
