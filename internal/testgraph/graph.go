// Package testgraph wires one replica's services below voice and chat (the
// quota, the tool executor, the ledger) over a test database and a
// simulator, for the packages that sit above them. It is apart from
// testkit so that testkit imports no domain package and every package's
// tests, quota's and tools' among them, can use it.
package testgraph

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/voxgate/voxgate/billing"
	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/internal/pgtest"
	"github.com/voxgate/voxgate/internal/testkit"
	"github.com/voxgate/voxgate/quota"
	"github.com/voxgate/voxgate/safety"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/tools"
)

// Graph is one replica's services below voice and chat, over a database
// and a simulator that other replicas' graphs may share.
type Graph struct {
	DBURL  string
	Pool   *pgxpool.Pool
	Quota  *quota.Service
	Tools  *tools.Executor
	Ledger *billing.Ledger
	Sim    *sim.Server
	// SimServer is the simulator's HTTP server when this graph started it
	// (its Client trusts the TLS one); nil when the simulator was given.
	SimServer *httptest.Server
	SimURL    string // without /v1
}

// Options shape a Graph; the zero value is a fresh database and a
// zero-latency simulator with the default config.
type Options struct {
	DBURL    string // share another graph's database; empty: a fresh one
	PoolSize int32  // default 6
	// Sim and SimURL share another graph's simulator; otherwise one is
	// started with SimConfig (zero latency unless it sets one), over TLS
	// with HTTP/2 when SimTLS is set, as the real API is served.
	Sim       *sim.Server
	SimURL    string
	SimConfig sim.Config
	SimTLS    bool
	// Quota is the plans; the zero value is OpenQuota.
	Quota config.Quota
	// QuotaNow is quota's clock (quota.Params.Now); nil is the database's.
	QuotaNow func() time.Time
	Tools    []*tools.Tool // the built-in tools
}

// OpenQuota is the built-in plans with the request windows opened up, so
// tests that make many requests hit only the limits they mean to.
func OpenQuota() config.Quota {
	q := config.DefaultQuota()
	for name, p := range q.Plans {
		p.RequestsPerMinute, p.RequestsPerHour, p.RequestsPerDay = 10_000, 100_000, 1_000_000
		q.Plans[name] = p
	}
	return q
}

// NewGraph builds the graph o describes; what it opens is closed when the
// test ends.
func NewGraph(tb testing.TB, o Options) Graph {
	tb.Helper()
	g := Graph{DBURL: o.DBURL, Sim: o.Sim, SimURL: o.SimURL}
	if g.DBURL == "" {
		g.DBURL = pgtest.URL(tb)
	}
	if o.PoolSize == 0 {
		o.PoolSize = 6
	}
	g.Pool = pgtest.NewPool(tb, g.DBURL, o.PoolSize)
	if g.Sim == nil {
		g.Sim, g.SimServer = testkit.StartSim(tb, o.SimConfig, o.SimTLS)
		g.SimURL = g.SimServer.URL
	}
	if o.Quota.Plans == nil {
		o.Quota = OpenQuota()
	}
	var err error
	if g.Quota, err = quota.New(quota.Params{Pool: g.Pool, Config: o.Quota, Now: o.QuotaNow, Logger: testkit.Quiet()}); err != nil {
		tb.Fatal(err)
	}
	reg, err := tools.NewRegistry(tools.RegistryParams{Builtins: o.Tools, Plans: o.Quota.PlanNames()})
	if err != nil {
		tb.Fatal(err)
	}
	if g.Tools, err = tools.NewExecutor(tools.ExecutorParams{DB: g.Pool, Registry: reg, Plans: g.Quota, Logger: testkit.Quiet(),
		Screen: safety.CheckText}); err != nil {
		tb.Fatal(err)
	}
	prices, err := billing.DefaultPrices()
	if err != nil {
		tb.Fatal(err)
	}
	if g.Ledger, err = billing.NewLedger(billing.LedgerParams{Pool: g.Pool, Prices: prices, Logger: testkit.Quiet()}); err != nil {
		tb.Fatal(err)
	}
	return g
}

// Count is sql's one integer, read from pool.
func Count(t testing.TB, pool *pgxpool.Pool, sql string, args ...any) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}

// Spy is a server in front of g's simulator that sends every request body
// to bodies before the simulator answers it; its URL stands in for the
// simulator's.
func Spy(t testing.TB, g Graph, bodies chan<- []byte) string {
	t.Helper()
	spy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		bodies <- body
		r.Body = io.NopCloser(bytes.NewReader(body))
		g.Sim.ServeHTTP(w, r)
	}))
	t.Cleanup(spy.Close)
	return spy.URL
}
