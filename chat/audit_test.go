package chat_test

import (
	"slices"
	"testing"

	"github.com/voxgate/voxgate/audit"
	"github.com/voxgate/voxgate/internal/testgraph"
	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/sim"
)

// answered checks the row of a unit that answered: success exactly when
// every filter its kind requires ran (which the turn reports), else
// degraded; finished, with the hash of the message in.
func answered(t *testing.T, r audit.Row, kind audit.Kind, message string) {
	t.Helper()
	want := audit.Degraded
	if len(audit.Missing(kind, r.FiltersRan)) == 0 {
		want = audit.Success
	}
	if r.Kind != kind || r.Status != want || r.ErrorCode != "" || r.FinishedAt == nil {
		t.Errorf("row %+v: want %s %s, finished, no error code", r, kind, want)
	}
	if message != "" && r.InputHash != audit.Hash(message) {
		t.Errorf("input_hash %s, want the message's %s", r.InputHash, audit.Hash(message))
	}
}

// A turn that answers: its row went in pending before the model call and
// ends answered, with the answer's hash, the provider that answered and
// the trace; the input filter ran (the message was sanitized), and the
// row says success only if the output filters ran too.
func TestAuditChatAnswered(t *testing.T) {
	t.Parallel()
	g := gated{marker: "hello", entered: make(chan struct{}, 1), open: make(chan struct{})}
	f := newFixture(t, options{provider: func(p llm.Provider) llm.Provider { g.Provider = p; return g }})
	done := make(chan reply, 1)
	go func() { done <- f.post(t, call{user: "u1", body: map[string]any{"message": "hello"}}) }()
	<-g.entered // the model call has begun: the row is in, pending
	r := testgraph.OneAuditRow(t, f.pool, "u1")
	if r.Status != audit.Pending || r.FinishedAt != nil || r.InputHash != audit.Hash("hello") {
		t.Errorf("during the model call: %+v, want pending with the message's hash", r)
	}
	close(g.open)
	rep := <-done
	msg, _ := rep.response(t)["message"].(string)
	r = testgraph.OneAuditRow(t, f.pool, "u1")
	answered(t, r, audit.KindChat, "hello")
	if !slices.Contains(r.FiltersRan, audit.FilterInput) {
		t.Errorf("filters_ran %v, want input among them", r.FiltersRan)
	}
	if msg == "" || r.OutputHash != audit.Hash(msg) || r.Provider != "openai" || len(r.FailoverTrace) == 0 {
		t.Errorf("row %+v: want the hash of %q, provider openai and a trace", r, msg)
	}
}

// A turn that stops for a confirmation answered; a degraded turn (every
// target failed, the fallback answered) is degraded; a content-filter
// refusal is refused with its code.
func TestAuditChatOutcomes(t *testing.T) {
	t.Parallel()
	t.Run("confirmation", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, options{})
		rep := f.post(t, call{user: "u1", body: map[string]any{"message": "log oats", "stream": false}})
		if rep.Status != 200 {
			t.Fatalf("%d %v", rep.Status, rep.Body)
		}
		answered(t, testgraph.OneAuditRow(t, f.pool, "u1"), audit.KindChat, "log oats")
	})
	t.Run("degraded", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, options{})
		if _, err := f.sim.AddFault(sim.Fault{Endpoint: sim.EndpointChatCompletions, Kind: sim.FaultUnavailable, Fraction: 1}); err != nil {
			t.Fatal(err)
		}
		rep := f.post(t, call{user: "u1", body: map[string]any{"message": "hello", "stream": false}})
		if rep.Status != 200 || rep.Body["degraded"] != true {
			t.Fatalf("%d %v, want a degraded answer", rep.Status, rep.Body)
		}
		r := testgraph.OneAuditRow(t, f.pool, "u1")
		if r.Status != audit.Degraded || r.Provider != "" || len(r.FailoverTrace) == 0 {
			t.Errorf("row %+v, want degraded, no provider, the failed attempts in the trace", r)
		}
	})
	t.Run("refused", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, options{})
		if _, err := f.sim.AddFault(sim.Fault{Endpoint: sim.EndpointChatCompletions, Kind: sim.FaultContentFilter, Fraction: 1}); err != nil {
			t.Fatal(err)
		}
		rep := f.post(t, call{user: "u1", body: map[string]any{"message": "hello", "stream": false}})
		if rep.Status != 422 {
			t.Fatalf("%d %v, want 422", rep.Status, rep.Body)
		}
		r := testgraph.OneAuditRow(t, f.pool, "u1")
		if r.Status != audit.Refused || r.ErrorCode != "AI_CONTENT_FILTERED" || r.OutputHash != "" || r.FinishedAt == nil {
			t.Errorf("row %+v, want refused AI_CONTENT_FILTERED without an output hash", r)
		}
	})
}
