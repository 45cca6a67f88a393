package spool

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

type metrics struct {
	pending, oldest            prometheus.GaugeFunc
	spooled, completed, failed *prometheus.CounterVec
}

// newMetrics registers the spool's metrics. The pending gauge is read from
// the directory at each scrape (pending), not kept as a count of this
// process's writes and removals: such a count drifts from the directory
// (the same work spooled twice is one file; a job copied in by an operator
// was never counted in) and could go below zero.
func newMetrics(r prometheus.Registerer, pending, oldest func() float64) (*metrics, error) {
	m := &metrics{
		pending: prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: "voxgate", Subsystem: "spool", Name: "pending_jobs",
			Help: "Jobs waiting in the spool directory for the database."}, pending),
		oldest: prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: "voxgate", Subsystem: "spool", Name: "oldest_job_age_seconds",
			Help: "Age of the oldest job waiting in the spool directory, 0 when none waits: how far the ledger lags behind the usage it will record."}, oldest),
		spooled: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "voxgate", Subsystem: "spool", Name: "spooled_total",
			Help: "Jobs the database did not take in time, written to the spool, by kind."}, []string{"kind"}),
		completed: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "voxgate", Subsystem: "spool", Name: "completed_total",
			Help: "Spooled jobs completed from the spool, by kind."}, []string{"kind"}),
		failed: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "voxgate", Subsystem: "spool", Name: "refused_total",
			Help: "Jobs refused for good (not retryable, or a spool file that cannot be read), by kind."}, []string{"kind"}),
	}
	for _, c := range []prometheus.Collector{m.pending, m.oldest, m.spooled, m.completed, m.failed} {
		if err := r.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// pendingNow is the gauge's value: the jobs in the directory now, or,
// when the directory cannot be read at that moment, the last count read
// (the failure itself surfaces where the spool writes and drains).
func (s *Spool) pendingNow() float64 {
	if n, err := s.Pending(); err == nil {
		s.lastPending.Store(int64(n))
	}
	return float64(s.lastPending.Load())
}

// oldestNow is the age of the oldest job in the directory (by its file's
// modification time, set when it was spooled), 0 when there is none or
// the directory cannot be read.
func (s *Spool) oldestNow() float64 {
	if oldest, ok := s.oldestJob(); ok {
		return max(time.Since(oldest).Seconds(), 0)
	}
	return 0
}
