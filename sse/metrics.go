package sse

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/voxgate/voxgate/internal/apierr"
)

type metrics struct {
	turns    *prometheus.CounterVec
	duration prometheus.Histogram
	streams  prometheus.Gauge
	// completions and firstByte are /v1/chat/completions' own: the
	// router's series (voxgate_llm_*) count attempts, not requests.
	completions *prometheus.CounterVec
	firstByte   *prometheus.HistogramVec
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
	for _, c := range []prometheus.Collector{m.turns, m.duration, m.streams, m.completions, m.firstByte} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("sse: metrics: %w", err)
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
