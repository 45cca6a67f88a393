package llm

import (
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/voxgate/voxgate/internal/modelname"
)

// routerMetrics are the router's series (DESIGN §11): attempts by
// provider, model and outcome; failovers; time to first content per
// attempt; and each target's breaker, read from the breakers at scrape
// time so the state shown is never stale.
type routerMetrics struct {
	attempts  *prometheus.CounterVec
	failovers *prometheus.CounterVec
	first     *prometheus.HistogramVec
	continued *prometheus.CounterVec
	skipped   *prometheus.CounterVec
	rerouted  *prometheus.CounterVec
}

// Outcomes of voxgate_llm_continuations_total.
const (
	continuationDone = "continued"
	continuationNone = "none"
)

func newRouterMetrics(reg prometheus.Registerer, r *Router) (*routerMetrics, error) {
	m := &routerMetrics{
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "voxgate", Subsystem: "llm", Name: "attempts_total",
			Help: "Routed model calls' attempts, by provider, model and outcome (success, a provider code, circuit_open, budget_exhausted, not_configured).",
		}, []string{"provider", "model", "outcome"}),
		failovers: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "voxgate", Subsystem: "llm", Name: "failovers_total",
			Help: "Moves to a route's next target after a failure, by route.",
		}, []string{"route"}),
		first: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "voxgate", Subsystem: "llm", Name: "first_content_seconds",
			Help:    "Time from an attempt's start to its first text or tool-call delta.",
			Buckets: []float64{.1, .25, .5, 1, 2, 4, 8, 15, 30, 60},
		}, []string{"provider", "model"}),
		continued: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "voxgate", Subsystem: "llm", Name: "continuations_total",
			Help: "Answers cut after commit, by route and outcome: continued on a target that declares prefill, or none could.",
		}, []string{"route", "outcome"}),
		rerouted: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "voxgate", Subsystem: "llm", Name: "rerouted_total",
			Help: "Answers by another model than the target asked (a provider re-routing a retired model), by provider, the model asked and the one that answered; recorded and priced as the one that answered.",
		}, []string{"provider", "asked", "answered"}),
		skipped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "voxgate", Subsystem: "llm", Name: "skipped_chunks_total",
			Help: "Unreadable chunks set aside in a stream that went on: they carried none of the answer.",
		}, []string{"provider", "model"}),
	}
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{m.attempts, m.failovers, m.first, m.continued, m.skipped, m.rerouted, breakerCollector{r}} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("llm: router: metrics: %w", err)
		}
	}
	return m, nil
}

func (m *routerMetrics) attempt(provider, model, outcome string) {
	m.attempts.WithLabelValues(provider, model, outcome).Inc()
}

func (m *routerMetrics) failover(route string) { m.failovers.WithLabelValues(route).Inc() }

func (m *routerMetrics) skippedChunk(t Target) { m.skipped.WithLabelValues(t.Provider, t.Model).Inc() }

// answered counts an answer by another model than t's (modelname.Rerouted).
func (m *routerMetrics) answered(t Target, u *Usage) {
	if u != nil && modelname.Rerouted(t.Model, u.Model) {
		m.rerouted.WithLabelValues(t.Provider, t.Model, u.Model).Inc()
	}
}

func (m *routerMetrics) continuation(route, outcome string) {
	m.continued.WithLabelValues(route, outcome).Inc()
}

func (m *routerMetrics) firstContent(t Target, d time.Duration) {
	m.first.WithLabelValues(t.Provider, t.Model).Observe(d.Seconds())
}

var breakerDesc = prometheus.NewDesc("voxgate_llm_breaker_state",
	"Each target's circuit breaker: 0 closed, 1 half-open, 2 open.", []string{"provider", "model"}, nil)

// breakerCollector reads the breakers when scraped.
type breakerCollector struct{ r *Router }

func (b breakerCollector) Describe(ch chan<- *prometheus.Desc) { ch <- breakerDesc }

func (b breakerCollector) Collect(ch chan<- prometheus.Metric) {
	for _, s := range b.r.Status() {
		v := 0.0
		switch s.State {
		case BreakerHalfOpen:
			v = 1
		case BreakerOpen:
			v = 2
		}
		ch <- prometheus.MustNewConstMetric(breakerDesc, prometheus.GaugeValue, v, s.Provider, s.Model)
	}
}

// TargetStatus is one target's health, for GET /v1/admin/providers.
type TargetStatus struct {
	Provider   string    `json:"provider"`
	Model      string    `json:"model"`
	Configured bool      `json:"configured"`
	State      string    `json:"state"`              // closed, open, half_open
	Failures   int       `json:"failures"`           // counted toward opening, since the last success
	OpenedAt   time.Time `json:"opened_at,omitzero"` // when it last opened; zero while closed
}

// Status is every target's breaker, in route order, each target once.
func (r *Router) Status() []TargetStatus {
	out := make([]TargetStatus, 0, len(r.order))
	for _, t := range r.order {
		state, failures, opened := r.breakers[t.String()].snapshot()
		if state == BreakerClosed {
			opened = time.Time{}
		}
		out = append(out, TargetStatus{Provider: t.Provider, Model: t.Model, Configured: r.providers[t.Provider] != nil,
			State: state, Failures: failures, OpenedAt: opened})
	}
	return out
}
