package controlplane

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

type metrics struct {
	started   *prometheus.CounterVec
	ended     *prometheus.CounterVec
	toolCalls *prometheus.CounterVec
	mint      prometheus.Histogram
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		started: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "voxgate", Subsystem: "voice", Name: "sessions_started_total",
			Help: "Voice sessions started, by mode.",
		}, []string{"mode"}),
		ended: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "voxgate", Subsystem: "voice", Name: "sessions_ended_total",
			Help: "Voice sessions ended, by mode and end reason.",
		}, []string{"mode", "reason"}),
		toolCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "voxgate", Subsystem: "voice", Name: "tool_calls_total",
			Help: "Voice tool calls, by outcome (ok, replayed, tool_error, refused).",
		}, []string{"outcome"}),
		mint: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: "voxgate", Subsystem: "voice", Name: "mint_seconds",
			Help:    "Time to mint a session's client secret at the provider.",
			Buckets: []float64{.01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}),
	}
	for _, c := range []prometheus.Collector{m.started, m.ended, m.toolCalls, m.mint} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("controlplane: metrics: %w", err)
		}
	}
	return m, nil
}
