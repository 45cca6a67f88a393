package server

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

type httpMetrics struct {
	requests     *prometheus.CounterVec
	duration     *prometheus.HistogramVec
	panics       prometheus.Counter
	authFailures prometheus.Counter
}

func newHTTPMetrics(reg prometheus.Registerer) (*httpMetrics, error) {
	m := &httpMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "voxgate", Subsystem: "http", Name: "requests_total",
			Help: "HTTP requests by route pattern (which includes the method) and status code.",
		}, []string{"route", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "voxgate", Subsystem: "http", Name: "request_duration_seconds",
			Help:    "HTTP request duration by route pattern.",
			Buckets: []float64{.001, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"route"}),
		panics: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: "voxgate", Subsystem: "http", Name: "panics_total",
			Help: "Handler panics recovered.",
		}),
		authFailures: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: "voxgate", Subsystem: "auth", Name: "failures_total",
			Help: "Requests refused for a missing or invalid token.",
		}),
	}
	for _, c := range []prometheus.Collector{m.requests, m.duration, m.panics, m.authFailures} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// observe records one request. The route pattern, not the path, is the
// label, so ids in paths never explode the series count. A request traced
// and sampled leaves its trace id as the duration's exemplar, so a slow
// bucket on a dashboard leads to a trace (served to scrapers that ask for
// OpenMetrics).
func (m *httpMetrics) observe(route string, status int, d time.Duration, traceID string) {
	m.requests.WithLabelValues(route, statusLabel(status)).Inc()
	h := m.duration.WithLabelValues(route)
	if e, ok := h.(prometheus.ExemplarObserver); ok && traceID != "" {
		e.ObserveWithExemplar(d.Seconds(), prometheus.Labels{"trace_id": traceID})
		return
	}
	h.Observe(d.Seconds())
}

// MetricsHandler serves /metrics in Prometheus format, on the main listener
// or on a separate one.
func (s *Server) MetricsHandler() http.Handler {
	return promhttp.HandlerFor(s.registry, promhttp.HandlerOpts{EnableOpenMetrics: true})
}

// statusLabels holds the label text of every HTTP status, so counting a
// request does not format an integer.
var statusLabels = func() (l [600]string) {
	for i := 100; i < 600; i++ {
		l[i] = strconv.Itoa(i)
	}
	return l
}()

func statusLabel(code int) string {
	if code >= 100 && code < 600 {
		return statusLabels[code]
	}
	return strconv.Itoa(code)
}
