package controlplane

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// liveMetrics are mode live's own: delegations by outcome, appends the
// provider refused, and sidebands attached again after a drop.
type liveMetrics struct {
	delegations *prometheus.CounterVec
	refused     prometheus.Counter
	reattaches  prometheus.Counter
	// leftOpen counts provider sessions the gateway could not close: each
	// bills until the provider expires it (closeLive).
	leftOpen prometheus.Counter
}

// Delegation outcomes: created, answered, timed_out (the voice was told it
// could not be done), dropped (a result after its deadline, or superseded),
// blocked (the answer held personal data: the voice was told it could not
// be done, and nothing of it was said).
const (
	delegationCreated  = "created"
	delegationAnswered = "answered"
	delegationTimedOut = "timed_out"
	delegationDropped  = "dropped"
	delegationBlocked  = "blocked"
)

func newLiveMetrics(reg prometheus.Registerer) (*liveMetrics, error) {
	m := &liveMetrics{
		delegations: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "voxgate", Subsystem: "voice", Name: "live_delegations_total",
			Help: "GPT-Live delegations, by outcome (created, answered, timed_out, dropped, blocked).",
		}, []string{"outcome"}),
		refused: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: "voxgate", Subsystem: "voice", Name: "live_appends_refused_total",
			Help: "Thinking, commentary or instructions the provider refused (an error event naming the append).",
		}),
		reattaches: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: "voxgate", Subsystem: "voice", Name: "live_reattaches_total",
			Help: "Live sidebands attached again after a drop; what was said in the gap is lost.",
		}),
		leftOpen: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: "voxgate", Subsystem: "voice", Name: "live_sessions_left_open_total",
			Help: "GPT-Live sessions the gateway ended but could not close at the provider: each runs, and bills, until the provider expires it (2 h).",
		}),
	}
	for _, o := range []string{delegationCreated, delegationAnswered, delegationTimedOut, delegationDropped, delegationBlocked} {
		m.delegations.WithLabelValues(o)
	}
	for _, c := range []prometheus.Collector{m.delegations, m.refused, m.reattaches, m.leftOpen} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("controlplane: metrics: %w", err)
		}
	}
	return m, nil
}
