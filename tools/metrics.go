package tools

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// Outcomes counted by voxgate_tools_calls_total.
const (
	outcomeSucceeded   = "succeeded"
	outcomeFailed      = "failed"
	outcomeTimeout     = "timeout"
	outcomePanic       = "panic"
	outcomeInterrupted = "interrupted"
	outcomeReplayed    = "replayed"
	outcomeInvalid     = "invalid"
	outcomeRefused     = "refused"
	outcomeConflict    = "conflict"
	outcomeError       = "error"
	// outcomeGuarded: the write guard answered (a value out of range, or
	// a dry run's proposal) and the body did not run.
	outcomeGuarded = "guarded"
)

// Outcomes counted by voxgate_tools_sql_statements_total.
const (
	sqlOutcomeRows      = "rows"             // answered
	sqlOutcomeRefused   = "refused_parser"   // the checker refused it; never sent
	sqlOutcomeRefusedDB = "refused_database" // the sandbox refused it or it failed
	sqlOutcomeTimeout   = "timeout"          // statement_timeout
	sqlOutcomeError     = "error"            // the gateway's own failure
)

// metrics are an executor's. Bodies count their own work (SQL statements,
// MCP calls) through the Invocation the executor hands them, so the
// counts land in the registry of the executor that ran the call.
type metrics struct {
	calls    *prometheus.CounterVec
	duration *prometheus.HistogramVec
	replays  *prometheus.CounterVec
	// sqlStatements and mcpCalls are counted by SQL and MCP tool bodies.
	sqlStatements *prometheus.CounterVec
	mcpCalls      *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "voxgate", Subsystem: "tools", Name: "calls_total",
			Help: "Tool calls by tool and outcome.",
		}, []string{"tool", "outcome"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "voxgate", Subsystem: "tools", Name: "call_duration_seconds",
			Help:    "Time a tool body ran, from claim to result, by tool.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"tool"}),
		replays: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "voxgate", Subsystem: "tools", Name: "replays_total",
			Help: "Duplicate call_ids answered from the stored result.",
		}, []string{"tool"}),
		sqlStatements: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "voxgate", Subsystem: "tools", Name: "sql_statements_total",
			Help: "SQL tool statements by tool and outcome (rows, refused_parser, refused_database, timeout, error).",
		}, []string{"tool", "outcome"}),
		mcpCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "voxgate", Subsystem: "tools", Name: "mcp_calls_total",
			Help: "MCP tool calls by server and outcome (ok, tool_error, unreachable, too_large, timeout).",
		}, []string{"server", "outcome"}),
	}
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{m.calls, m.duration, m.replays, m.sqlStatements, m.mcpCalls} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("tools: register metrics: %w", err)
		}
	}
	return m, nil
}

// countSQL counts one SQL tool statement; a body run outside an executor
// (nil metrics) counts nothing.
func (m *metrics) countSQL(tool, outcome string) {
	if m != nil {
		m.sqlStatements.WithLabelValues(tool, outcome).Inc()
	}
}

// countMCP counts one MCP tool call, as countSQL does.
func (m *metrics) countMCP(server, outcome string) {
	if m != nil {
		m.mcpCalls.WithLabelValues(server, outcome).Inc()
	}
}
