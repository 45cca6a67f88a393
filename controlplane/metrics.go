package controlplane

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
)

type metrics struct {
	started   *prometheus.CounterVec
	ended     *prometheus.CounterVec
	toolCalls *prometheus.CounterVec
	mint      prometheus.Histogram
	// Sideband: sessions held here, adoptions, configs re-asserted, the
	// tool round trip the gateway adds, hangups by reason, cap notices.
	held      prometheus.Gauge
	adoptions prometheus.Counter
	reasserts prometheus.Counter
	roundTrip prometheus.Histogram
	hangups   *prometheus.CounterVec
	notices   prometheus.Counter
	live      *liveMetrics
	// transcriptFlags counts spoken answers flagged after the fact.
	transcriptFlags *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer, pool *pgxpool.Pool) (*metrics, error) {
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
		transcriptFlags: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "voxgate", Subsystem: "voice", Name: "transcript_flags_total",
			Help: "Voice answers the safety detectors flagged, by flag (medical_claim, pii_leak): spoken ones after the fact, and live delegations' answers stopped before they were said.",
		}, []string{"flag"}),
		held: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: "voxgate", Subsystem: "voice", Name: "sideband_sessions_held",
			Help: "Sideband sessions whose call this replica holds now.",
		}),
		adoptions: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: "voxgate", Subsystem: "voice", Name: "sideband_adoptions_total",
			Help: "Sideband sessions this replica took over from a holder that died or drained.",
		}),
		reasserts: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: "voxgate", Subsystem: "voice", Name: "sideband_config_reasserted_total",
			Help: "Times the gateway restored its session config after the app changed it.",
		}),
		roundTrip: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: "voxgate", Subsystem: "voice", Name: "sideband_tool_overhead_seconds",
			Help:    "Time from a function call's last event to its output sent, less the tool's own run.",
			Buckets: []float64{.0005, .001, .002, .005, .01, .025, .05, .1, .25, 1},
		}),
		hangups: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "voxgate", Subsystem: "voice", Name: "sideband_hangups_total",
			Help: "Calls the gateway hung up, by end reason.",
		}, []string{"reason"}),
		notices: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: "voxgate", Subsystem: "voice", Name: "sideband_cap_notices_total",
			Help: "Spoken notices that a session nears its reservation (80% and 95%).",
		}),
	}
	active := activeSessions{pool: pool, desc: prometheus.NewDesc("voxgate_voice_active_sessions",
		"Voice sessions open now, across every replica, by mode (read from the database at each scrape).", []string{"mode"}, nil)}
	for _, c := range []prometheus.Collector{m.started, m.ended, m.toolCalls, m.mint, active,
		m.held, m.adoptions, m.reasserts, m.roundTrip, m.hangups, m.notices, m.transcriptFlags} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("controlplane: metrics: %w", err)
		}
	}
	var err error
	m.live, err = newLiveMetrics(reg)
	return m, err
}

// activeSessions counts open sessions at scrape time. A session outlives
// the replica that started it, so a per-replica gauge would be wrong; the
// count uses the partial index on open sessions and gives up after a
// second rather than stall a scrape.
type activeSessions struct {
	pool *pgxpool.Pool
	desc *prometheus.Desc
}

func (a activeSessions) Describe(ch chan<- *prometheus.Desc) { ch <- a.desc }

// Collect sends every mode, 0 for one with no open session, so a panel's
// series do not come and go.
func (a activeSessions) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	rows, err := a.pool.Query(ctx, `SELECT mode, count(*) FROM voice_sessions WHERE ended_at IS NULL AND expires_at > now() GROUP BY mode`)
	if err != nil {
		return
	}
	open := map[string]int64{}
	for rows.Next() {
		var mode string
		var n int64
		if rows.Scan(&mode, &n) != nil {
			rows.Close()
			return
		}
		open[mode] = n
	}
	if rows.Err() != nil {
		return
	}
	for _, mode := range []string{ModeDirect, ModeSideband, ModeRelay, ModeLive} {
		ch <- prometheus.MustNewConstMetric(a.desc, prometheus.GaugeValue, float64(open[mode]), mode)
	}
}
