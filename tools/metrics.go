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
)

// Outcomes counted by voxgate_tools_sql_statements_total.
const (
	sqlOutcomeRows      = "rows"             // answered
	sqlOutcomeRefused   = "refused_parser"   // the checker refused it; never sent
	sqlOutcomeRefusedDB = "refused_database" // the sandbox refused it or it failed
	sqlOutcomeTimeout   = "timeout"          // statement_timeout
	sqlOutcomeError     = "error"            // the gateway's own failure
)

// sqlStatements counts SQL tool statements. It is the package's because
// SQL tool bodies are built before any executor; newMetrics registers it.
var sqlStatements = prometheus.NewCounterVec(prometheus.CounterOpts{
	Namespace: "voxgate", Subsystem: "tools", Name: "sql_statements_total",
	Help: "SQL tool statements by tool and outcome (rows, refused_parser, refused_database, timeout, error).",
}, []string{"tool", "outcome"})

func countSQL(tool, outcome string) { sqlStatements.WithLabelValues(tool, outcome).Inc() }

type metrics struct {
	calls    *prometheus.CounterVec
	duration *prometheus.HistogramVec
	replays  *prometheus.CounterVec
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
	}
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{m.calls, m.duration, m.replays, sqlStatements, mcpCalls} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("tools: register metrics: %w", err)
		}
	}
	return m, nil
}
