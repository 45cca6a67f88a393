package tools

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/internal/pgtest"
)

// Each executor counts into its own registry: a call one executor runs is
// never seen in another's, as two gateways in one process (the tests, a
// second Main) must not see each other's calls.
func TestToolMetricsBelongToTheirExecutor(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		metric string
		setup  func(t *testing.T) (*pgxpool.Pool, *Registry, Call)
	}{
		{"SQL statements", "voxgate_tools_sql_statements_total", func(t *testing.T) (*pgxpool.Pool, *Registry, Call) {
			pool := sqlPool(t)
			reg := mustRegistry(t, RegistryParams{DB: pool, Config: config.Tools{SQL: []config.SQLTool{openDef("ask")}}})
			return pool, reg, proCall("u1", "m1", "ask", sqlArgs("SELECT count(*) AS n FROM my_entries"))
		}},
		{"MCP calls", "voxgate_tools_mcp_calls_total", func(t *testing.T) (*pgxpool.Pool, *Registry, Call) {
			e, _, _ := mcpFixture(t, config.MCPServer{Timeout: 2 * time.Second})
			return pgtest.Pool(t), e.Registry(), mcpCall("m1", "notes__search", `{"q":"tea"}`)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			pool, reg, call := tc.setup(t)
			ran, idle := prometheus.NewRegistry(), prometheus.NewRegistry()
			a := executorCounting(t, pool, reg, ran)
			executorCounting(t, pool, reg, idle)
			if res, err := a.Execute(context.Background(), call); err != nil || res.Error != nil {
				t.Fatalf("call: %+v %v", res, err)
			}
			if got, err := testutil.GatherAndCount(ran, tc.metric); err != nil || got != 1 {
				t.Fatalf("the running executor's %s: got %d series (%v), want 1", tc.metric, got, err)
			}
			if got, err := testutil.GatherAndCount(idle, tc.metric); err != nil || got != 0 {
				t.Fatalf("another executor's %s: got %d series (%v), want 0", tc.metric, got, err)
			}
		})
	}
}

func executorCounting(t *testing.T, pool *pgxpool.Pool, reg *Registry, metrics prometheus.Registerer) *Executor {
	t.Helper()
	e, err := NewExecutor(ExecutorParams{DB: pool, Registry: reg, Plans: fakePlans{}, Metrics: metrics,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatalf("NewExecutor: %v", err)
	}
	return e
}
