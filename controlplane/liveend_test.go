package controlplane_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/voxgate/voxgate/internal/testkit"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
	"github.com/voxgate/voxgate/tools"
)

// The phone hangs up while a delegation's tool is still running: the loop
// is cancelled, the tool (which runs exactly once) ends in its own time,
// and what the loop's first model call used (reported when the call
// returned) is on the record, priced by hand.
func TestLiveDelegationRunningAtEndIsRecorded(t *testing.T) {
	t.Parallel()
	var started atomic.Int64
	release := make(chan struct{}) // the tool returns once the session has ended
	var releaseOnce sync.Once
	free := func() { releaseOnce.Do(func() { close(release) }) }
	defer free() // a test that fails first still lets the tool return
	no := false
	script := sim.Script{Rules: []sim.Rule{{When: sim.When{Contains: []string{"pasta"}, ToolResults: &no},
		Reply: sim.Reply{ToolCalls: []sim.ScriptCall{{Name: "slow", Arguments: map[string]any{}}}}}}}
	f := newFixture(t, options{backend: "gpt-4.1-mini", simCfg: oneTurn(script, simtest.ZeroLatency()),
		moreTools: []*tools.Tool{{Name: "slow", Description: "Takes its time.", Voice: true, Parameters: json.RawMessage(`{"type":"object"}`),
			Run: func(context.Context, tools.Invocation) (tools.Outcome, error) {
				started.Add(1)
				<-release // the session ends meanwhile
				return tools.Outcome{Data: "done"}, nil
			}}}})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	p, start, liveID := askLive(t, ctx, f)
	testkit.Eventually(t, ctx, "the tool running", func() bool { return started.Load() == 1 })
	ended, st := endLive(t, ctx, f, p, start.SessionID, liveID)
	free()
	rec := ended.Cost
	ms, tk := liveMillis(st), rec.Tokens
	want := priceLiveWithBackend(ms, tk)
	if !strings.HasPrefix(rec.BackendModel, "gpt-4.1-mini") || tk.BackendTextIn == 0 || tk.BackendTextOut == 0 ||
		rec.CostMicros == nil || *rec.CostMicros != want {
		t.Fatalf("record %+v; want the cut delegation's first call on it, %d micros", rec, want)
	}
	if rows := sessionAudit(t, ctx, f, start.SessionID, "live_delegation"); len(rows) != 1 || rows[0].status != "refused" {
		t.Fatalf("delegation rows %+v; want one refused", rows)
	}
}
