package completions_test

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/voxgate/voxgate/audit"
	"github.com/voxgate/voxgate/completions"
	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/internal/spool"
	"github.com/voxgate/voxgate/internal/testgraph"
	"github.com/voxgate/voxgate/internal/testkit"
	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/llm/openai"
	"github.com/voxgate/voxgate/safety"
	"github.com/voxgate/voxgate/safety/judge"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
	"github.com/voxgate/voxgate/tools"
	"github.com/voxgate/voxgate/unit"
)

// fixture is one replica's completions service over a database and a
// simulator. The graph registers a tool the endpoint must never run.
type fixture struct {
	svc    *completions.Service
	pool   *pgxpool.Pool
	sim    *sim.Server
	simURL string
	dbURL  string
	runs   *atomic.Int64 // how often the registered tool ran
}

type options struct {
	simCfg   *sim.Config
	sim      *sim.Server
	simURL   string
	dbURL    string
	plans    func(*config.Quota)
	cfg      func(*config.Chat)
	poolSize int32 // default 6
	// provider, when set, is the router the service calls, given the
	// simulator's adapter; else chat.route with one target on it.
	provider func(llm.Provider) llm.Provider
	// capture, when set, receives every Chat Completions request body.
	capture   chan<- []byte
	safetyIDs safety.Identifiers
	spool     *spool.Spool
	// moreModels are models of further route targets, beside chat.model
	// (the reservation prices at the dearest).
	moreModels []string
	registry   *prometheus.Registry
	// judge, when set, is the safety filter's judge (its route must be
	// one of the router's).
	judge *judge.Config
	// quotaNow is quota's clock; nil is the database's.
	quotaNow func() time.Time
	// tier, when set, adds route "tiered": one target on gpt-6.2-sol
	// asking 12-hour cache writes, on a simulator of its own whose project
	// is served on this tier.
	tier string
	// askTier, when set, is the "tiered" target's service_tier (on a
	// project served on tier, "" the default).
	askTier string
}

func newFixture(t testing.TB, o options) *fixture {
	t.Helper()
	simCfg := sim.Config{}
	if o.simCfg != nil {
		simCfg = *o.simCfg
	}
	qcfg := testgraph.OpenQuota()
	if o.plans != nil {
		o.plans(&qcfg)
	}
	runs := &atomic.Int64{}
	never := &tools.Tool{Name: "search_items", Description: "Searches the catalogue.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}}}`),
		Run: func(context.Context, tools.Invocation) (tools.Outcome, error) {
			runs.Add(1)
			return tools.Outcome{Data: map[string]any{"items": []string{}}}, nil
		}}
	g := testgraph.NewGraph(t, testgraph.Options{DBURL: o.dbURL, PoolSize: o.poolSize, Sim: o.sim, SimURL: o.simURL,
		SimConfig: simCfg, Quota: qcfg, QuotaNow: o.quotaNow, Tools: []*tools.Tool{never}})
	o.simURL = g.SimURL
	if g.SimServer != nil && o.capture != nil {
		o.simURL = testgraph.Spy(t, g, o.capture)
	}
	adapter, err := openai.New(openai.Params{BaseURL: o.simURL + "/v1", APIKey: simtest.TestKey})
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.DefaultChat()
	if o.cfg != nil {
		o.cfg(&cfg)
	}
	var router llm.Provider
	if o.provider != nil {
		router = o.provider(adapter)
	} else if router, err = llm.NewRouter(llm.RouterParams{Providers: map[string]llm.Provider{"openai": adapter},
		Routes: []llm.Route{{Name: cfg.Route, Targets: []llm.Target{{Provider: "openai", Model: cfg.Model}}}}}); err != nil {
		t.Fatal(err)
	}
	log := testkit.Quiet()
	sp := o.spool
	if sp == nil {
		if sp, err = spool.New(spool.Params{Logger: log}); err != nil {
			t.Fatal(err)
		}
	}
	var jc judge.Config
	if o.judge != nil {
		jc = *o.judge
	}
	env := &unit.Env{Pool: g.Pool, Quota: g.Quota, Provider: router, Ledger: g.Ledger, Audit: audit.New(g.Pool),
		Spool: sp, SafetyIDs: o.safetyIDs, Judge: jc, Log: log}
	var reg prometheus.Registerer // a nil *Registry would be a non-nil Registerer
	if o.registry != nil {
		reg = o.registry
	}
	svc, err := completions.New(completions.Params{Env: env, Models: append([]string{cfg.Model}, o.moreModels...),
		Config: cfg, Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{svc: svc, pool: g.Pool, sim: g.Sim, simURL: o.simURL, dbURL: g.DBURL, runs: runs}
}

// count is sql's one integer.
func (f *fixture) count(t testing.TB, sql string, args ...any) int {
	t.Helper()
	return testgraph.Count(t, f.pool, sql, args...)
}

func yes() *bool { b := true; return &b }
func no() *bool  { b := false; return &b }
