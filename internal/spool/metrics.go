package spool

import "github.com/prometheus/client_golang/prometheus"

type metrics struct {
	pending                    prometheus.Gauge
	spooled, completed, failed *prometheus.CounterVec
}

func newMetrics(r prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		pending: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: "voxgate", Subsystem: "spool", Name: "pending_jobs",
			Help: "Jobs waiting in the spool directory for the database."}),
		spooled: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "voxgate", Subsystem: "spool", Name: "spooled_total",
			Help: "Jobs the database did not take in time, written to the spool, by kind."}, []string{"kind"}),
		completed: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "voxgate", Subsystem: "spool", Name: "completed_total",
			Help: "Spooled jobs completed from the spool, by kind."}, []string{"kind"}),
		failed: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "voxgate", Subsystem: "spool", Name: "refused_total",
			Help: "Jobs refused for good (not retryable, or a spool file that cannot be read), by kind."}, []string{"kind"}),
	}
	for _, c := range []prometheus.Collector{m.pending, m.spooled, m.completed, m.failed} {
		if err := r.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}
