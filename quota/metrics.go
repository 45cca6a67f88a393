package quota

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the quota series of DESIGN §13.
type metrics struct {
	denials    *prometheus.CounterVec // by kind (chat|voice) and limit
	admissions *prometheus.CounterVec // by kind and outcome (admitted|denied|error)
	latency    *prometheus.HistogramVec
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		denials: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "voxgate", Subsystem: "quota", Name: "denials_total",
			Help: "Requests refused by a quota, by the limit that refused.",
		}, []string{"kind", "reason"}),
		admissions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "voxgate", Subsystem: "quota", Name: "admissions_total",
			Help: "Admission attempts (chat turns and voice starts) by outcome.",
		}, []string{"kind", "outcome"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "voxgate", Subsystem: "quota", Name: "admission_duration_seconds",
			Help:    "Time for one admission, one database round trip.",
			Buckets: []float64{.0005, .001, .002, .005, .01, .025, .05, .1, .25, .5, 1},
		}, []string{"kind"}),
	}
	if reg == nil {
		return m, nil
	}
	var err error
	m.denials, err = register(reg, m.denials)
	if err != nil {
		return nil, err
	}
	m.admissions, err = register(reg, m.admissions)
	if err != nil {
		return nil, err
	}
	m.latency, err = register(reg, m.latency)
	return m, err
}

// register adds c to reg, or reuses the collector a second Service on the
// same registry already added.
func register[C prometheus.Collector](reg prometheus.Registerer, c C) (C, error) {
	err := reg.Register(c)
	var are prometheus.AlreadyRegisteredError
	if errors.As(err, &are) {
		if existing, ok := are.ExistingCollector.(C); ok {
			return existing, nil
		}
	}
	return c, err
}
