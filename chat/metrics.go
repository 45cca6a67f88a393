package chat

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

type metrics struct {
	turns    *prometheus.CounterVec
	duration prometheus.Histogram
	streams  prometheus.Gauge
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		turns: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "voxgate", Subsystem: "chat", Name: "turns_total",
			Help: "Chat turns, by outcome (ok, confirmation, error code, cancelled).",
		}, []string{"outcome"}),
		duration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: "voxgate", Subsystem: "chat", Name: "turn_seconds",
			Help:    "Time from admission to the end of a chat turn.",
			Buckets: []float64{.1, .25, .5, 1, 2.5, 5, 10, 25, 60, 120},
		}),
		streams: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: "voxgate", Subsystem: "chat", Name: "open_streams",
			Help: "Chat event streams open on this replica.",
		}),
	}
	for _, c := range []prometheus.Collector{m.turns, m.duration, m.streams} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("chat: metrics: %w", err)
		}
	}
	return m, nil
}
