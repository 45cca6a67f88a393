package completions

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/voxgate/voxgate/internal/apierr"
)

// metrics are the endpoint's own: the router's series (voxgate_llm_*)
// count attempts, not requests. Their names keep the voxgate_chat_ prefix
// they had when the chat service served the endpoint, so dashboards and
// alerts did not change.
type metrics struct {
	completions *prometheus.CounterVec
	firstByte   *prometheus.HistogramVec
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		completions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "voxgate", Subsystem: "chat", Name: "completions_total",
			Help: "POST /v1/chat/completions requests, by route (unknown: a model that names no route, or a body refused before it was read) and outcome (ok, cancelled, or the error code, in the stream or before it).",
		}, []string{"route", "outcome"}),
		firstByte: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "voxgate", Subsystem: "chat", Name: "completion_first_byte_seconds",
			Help:    "Time from a POST /v1/chat/completions request's arrival to the first byte of its answer (the first chunk; with stream false, the whole body), the provider's time included.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 25},
		}, []string{"route", "stream"}),
	}
	for _, c := range []prometheus.Collector{m.completions, m.firstByte} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("completions: metrics: %w", err)
		}
	}
	return m, nil
}

// unknownRoute labels a completion whose model names no route: the label
// takes only configured names, so a client cannot grow the series.
const unknownRoute = "unknown"

// completionObs is what one completion request shows in /metrics.
type completionObs struct {
	m        *metrics
	received time.Time
	route    string
	stream   bool
	outcome  string // set once the answer began: ok, cancelled, or its in-stream error's code
	wrote    bool
}

// firstByte notes the answer's first byte on its way out, once.
func (o *completionObs) firstByte() {
	if o.wrote {
		return
	}
	o.wrote = true
	o.m.firstByte.WithLabelValues(o.route, strconv.FormatBool(o.stream)).Observe(time.Since(o.received).Seconds())
}

// done counts the request by the outcome of its answer, else by err, what
// the handler returned.
func (o *completionObs) done(ctx context.Context, err error) {
	outcome := o.outcome
	switch {
	case outcome != "":
	case ctx.Err() != nil:
		outcome = "cancelled"
	case err != nil:
		outcome = string(apierr.From(err).Code)
	default:
		outcome = "ok"
	}
	o.m.completions.WithLabelValues(o.route, outcome).Inc()
}
