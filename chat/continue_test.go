package chat_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/voxgate/voxgate/billing"
	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/internal/testgraph"
	"github.com/voxgate/voxgate/internal/testkit"
	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/llm/openai"
	"github.com/voxgate/voxgate/sim"
	simopenai "github.com/voxgate/voxgate/sim/openai"
	"github.com/voxgate/voxgate/sim/simtest"
)

// A turn whose answer is cut after commit is finished on the fallback
// that declares prefill (docs/llm.md, "Continuation"): the user reads one
// whole answer, the same text an uncut turn has, nothing repeated; the
// turn's record names the model that finished it, the cut attempt has an
// estimated attempt record (its provider billed what it wrote), and the
// audit row's trace shows the cut point and the continuation.
func TestTurnContinuesACutAnswer(t *testing.T) {
	t.Parallel()
	f, fb := continuingFixture(t)
	story := map[string]any{"message": "tell me a story"}
	uncut := f.post(t, call{user: "u-uncut", body: story})
	want := contentOf(uncut)
	if uncut.Status != 200 || len(want) < 100 {
		t.Fatalf("the uncut turn: %d %q", uncut.Status, want)
	}
	if _, err := f.sim.AddFault(sim.Fault{Endpoint: sim.EndpointChatCompletions, Kind: sim.FaultCutStream, Fraction: 1, AfterChunks: 40}); err != nil {
		t.Fatal(err)
	}
	r := f.post(t, call{user: "u-cut", body: story})
	if got := contentOf(r); r.Status != 200 || got != want || r.last().Type != "done" || chatStats(fb).Requests != 1 {
		t.Fatalf("status %d, events %v\nread %q\nwant %q", r.Status, r.collapsed(), got, want)
	}

	row := testgraph.OneAuditRow(t, f.pool, "u-cut")
	tr := row.FailoverTrace
	if len(tr) != 2 || !strings.HasPrefix(tr[0].Entry, "openai/") || tr[0].CutAt == 0 || !strings.HasPrefix(tr[1].Entry, "fb/") || !tr[1].Continues {
		t.Fatalf("failover trace %+v: want the primary's cut with its cut point, then the fallback's continuation", tr)
	}
	rows, err := f.pool.Query(context.Background(), `SELECT kind, provider, usage_source, text_out FROM usage_records
		WHERE user_id = 'u-cut' ORDER BY kind`)
	if err != nil {
		t.Fatal(err)
	}
	got, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (billing.Record, error) {
		var rec billing.Record
		return rec, r.Scan(&rec.Kind, &rec.Provider, &rec.UsageSource, &rec.Usage.TextOut)
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Kind != billing.KindAttempt || got[0].Provider != "openai" || got[0].UsageSource != billing.SourceServerObserved ||
		got[0].Usage.TextOut != int64((tr[0].CutAt+3)/4) || got[1].Kind != billing.KindChat || got[1].Provider != "fb" {
		t.Fatalf("records %+v: want the cut attempt estimated, then the turn named for the fallback", got)
	}
}

// continuingFixture is chat.route over the fixture's simulator, then a
// fallback that declares prefill: an OpenAI-compatible server that
// continues a trailing assistant message (continue_final_message).
// It returns the fixture and the fallback's simulator.
func continuingFixture(t *testing.T) (*fixture, *sim.Server) {
	t.Helper()
	fb, fbURL := testkit.NewSim(t, sim.Config{Latency: simtest.ZeroLatency(), Script: script(),
		Chat: simopenai.Chat{ContinueFinalMessage: true}})
	fallback, err := openai.New(openai.Params{BaseURL: fbURL + "/v1", APIKey: simtest.TestKey})
	if err != nil {
		t.Fatal(err)
	}
	model := config.DefaultChat().Model
	f := newFixture(t, options{simCfg: &sim.Config{Latency: simtest.ZeroLatency(), Script: script()},
		provider: func(primary llm.Provider) llm.Provider {
			r, err := llm.NewRouter(llm.RouterParams{Providers: map[string]llm.Provider{"openai": primary, "fb": fallback},
				Routes: []llm.Route{{Name: config.DefaultRoute, Targets: []llm.Target{{Provider: "openai", Model: model},
					{Provider: "fb", Model: model, Continue: llm.ContinuePrefill}}}}})
			if err != nil {
				t.Fatal(err)
			}
			return r
		}})
	return f, fb
}

// A tool call cut mid-arguments is never run: the turn's fallback
// continues the answer's text and makes the call again, and the tool runs
// once, with the arguments the model meant.
func TestTurnContinuesACutToolCall(t *testing.T) {
	t.Parallel()
	f, fb := continuingFixture(t)
	// The role frame, "Let me look. " in 4 pieces of 4 bytes, the call's
	// header, then one of its three argument pieces (sim/openai/stream.go).
	if _, err := f.sim.AddFault(sim.Fault{Endpoint: sim.EndpointChatCompletions, Kind: sim.FaultCutStream, Count: 1, AfterChunks: 7}); err != nil {
		t.Fatal(err)
	}
	r := f.post(t, call{user: "u-cut-call", body: map[string]any{"message": "find me a soup"}})
	if r.Status != 200 || r.last().Type != "done" {
		t.Fatalf("status %d, events %v", r.Status, r.collapsed())
	}
	if n := chatStats(fb).Requests; n != 1 {
		t.Fatalf("the fallback was asked %d times, want once (the continuation)", n)
	}
	if n := f.runs.search.Load(); n != 1 {
		t.Fatalf("search_items ran %d times, want once", n)
	}
	if got := contentOf(r); got != "Let me look. I found tomato soup." {
		t.Errorf("answer %q: want the text before the call, once, and the answer after it", got)
	}
}

// A stall after commit and an unreadable tenth chunk are finished on the
// fallback too: the user reads the uncut answer.
func TestTurnContinuesAStallAndAnUnreadableChunk(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		fault sim.Fault
	}{
		{"stall after 20 chunks", sim.Fault{Endpoint: sim.EndpointChatCompletions, Kind: sim.FaultTimeout, Fraction: 1, AfterChunks: 21}},
		{"an unreadable tenth chunk", sim.Fault{Endpoint: sim.EndpointChatCompletions, Kind: sim.FaultMalformedJSON, Fraction: 1, AfterChunks: 9}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f, fb := continuingFixture(t)
			story := map[string]any{"message": "tell me a story"}
			want := contentOf(f.post(t, call{user: "u-uncut", body: story}))
			if _, err := f.sim.AddFault(tc.fault); err != nil {
				t.Fatal(err)
			}
			r := f.post(t, call{user: "u-faulted", body: story})
			if got := contentOf(r); r.Status != 200 || got != want || r.last().Type != "done" || chatStats(fb).Requests != 1 {
				t.Fatalf("status %d, events %v, the fallback asked %d times\nread %q\nwant %q",
					r.Status, r.collapsed(), chatStats(fb).Requests, got, want)
			}
		})
	}
}
