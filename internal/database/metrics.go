package database

import (
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
)

// poolCollector exports the pool's own counters at scrape time, so
// operators see saturation (acquires waiting, all connections busy) without
// a per-query cost.
type poolCollector struct {
	pool                                                   *pgxpool.Pool
	total, idle, acquired, maxConns, acquires, waits, wait *prometheus.Desc
	// sent counts what the pool sent, when Open made it.
	sent                   *counter
	statements, roundTrips *prometheus.Desc
}

// NewPoolCollector returns a Prometheus collector for pool's statistics.
func NewPoolCollector(pool *pgxpool.Pool) prometheus.Collector {
	d := func(name, help string) *prometheus.Desc {
		return prometheus.NewDesc(prometheus.BuildFQName("voxgate", "db_pool", name), help, nil, nil)
	}
	sent, _ := pool.Config().ConnConfig.Tracer.(*counter)
	return &poolCollector{
		pool:       pool,
		sent:       sent,
		statements: prometheus.NewDesc("voxgate_db_statements_total", "Statements sent to PostgreSQL (queries, batched queries, copies).", nil, nil),
		roundTrips: prometheus.NewDesc("voxgate_db_round_trips_total", "Round trips to PostgreSQL (queries, batches, copies, prepares; not pings).", nil, nil),
		total:      d("connections", "Open connections."),
		idle:       d("idle_connections", "Idle connections."),
		acquired:   d("acquired_connections", "Connections in use."),
		maxConns:   d("max_connections", "The pool's size limit."),
		acquires:   d("acquires_total", "Connections acquired from the pool."),
		waits:      d("empty_acquires_total", "Acquires that had to wait for a connection."),
		wait:       d("acquire_wait_seconds_total", "Time spent waiting for a connection."),
	}
}

func (c *poolCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.total, c.idle, c.acquired, c.maxConns, c.acquires, c.waits, c.wait} {
		ch <- d
	}
	if c.sent != nil {
		ch <- c.statements
		ch <- c.roundTrips
	}
}

func (c *poolCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.pool.Stat()
	ch <- prometheus.MustNewConstMetric(c.total, prometheus.GaugeValue, float64(s.TotalConns()))
	ch <- prometheus.MustNewConstMetric(c.idle, prometheus.GaugeValue, float64(s.IdleConns()))
	ch <- prometheus.MustNewConstMetric(c.acquired, prometheus.GaugeValue, float64(s.AcquiredConns()))
	ch <- prometheus.MustNewConstMetric(c.maxConns, prometheus.GaugeValue, float64(s.MaxConns()))
	ch <- prometheus.MustNewConstMetric(c.acquires, prometheus.CounterValue, float64(s.AcquireCount()))
	ch <- prometheus.MustNewConstMetric(c.waits, prometheus.CounterValue, float64(s.EmptyAcquireCount()))
	ch <- prometheus.MustNewConstMetric(c.wait, prometheus.CounterValue, s.AcquireDuration().Seconds())
	if c.sent != nil {
		ch <- prometheus.MustNewConstMetric(c.statements, prometheus.CounterValue, float64(c.sent.statements.Load()))
		ch <- prometheus.MustNewConstMetric(c.roundTrips, prometheus.CounterValue, float64(c.sent.roundTrips.Load()))
	}
}
