// Package server is voxgate's HTTP surface: the route table, the middleware
// every request passes through, and the probes. Domain packages supply the
// handlers; this package only wires them.
package server

import (
	"context"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/voxgate/voxgate/internal/auth"
	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/internal/httpx"
	"github.com/voxgate/voxgate/quota"
	"github.com/voxgate/voxgate/tools"
)

// Params are the parts a Server needs. New checks them.
type Params struct {
	Config   *config.Config
	Pool     *pgxpool.Pool
	Verifier *auth.Verifier
	Logger   *slog.Logger
	Registry *prometheus.Registry
	Quota    *quota.Service
	Tools    *tools.Executor
}

// Server holds the route table and its dependencies.
type Server struct {
	cfg      *config.Config
	pool     *pgxpool.Pool
	verifier *auth.Verifier
	log      *slog.Logger
	registry *prometheus.Registry
	quota    *quota.Service
	tools    *tools.Executor
	metrics  *httpMetrics
	draining atomic.Bool
	idPrefix string
	idSeq    atomic.Uint64
	handler  http.Handler
	routes   []route
}

// New builds the server and its route table.
func New(p Params) (*Server, error) {
	if p.Config == nil || p.Pool == nil || p.Verifier == nil || p.Registry == nil || p.Quota == nil || p.Tools == nil {
		return nil, errMissingParams
	}
	if p.Logger == nil {
		p.Logger = slog.Default()
	}
	s := &Server{
		cfg:      p.Config,
		pool:     p.Pool,
		verifier: p.Verifier,
		log:      p.Logger,
		registry: p.Registry,
		quota:    p.Quota,
		tools:    p.Tools,
		idPrefix: newIDPrefix(),
	}
	var err error
	if s.metrics, err = newHTTPMetrics(p.Registry); err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	s.routes = s.routeTable()
	for _, rt := range s.routes {
		mux.Handle(rt.pattern, rt.handler)
	}
	mux.Handle(missPattern, httpx.Handle(misses(mux)))
	s.handler = s.middleware(mux)
	return s, nil
}

// ServeHTTP serves a request through the middleware and route table.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.handler.ServeHTTP(w, r)
}

// Drain marks the server as draining: /readyz answers 503 so load balancers
// stop sending work, while requests in flight finish.
func (s *Server) Drain() { s.draining.Store(true) }

// Draining reports whether Drain was called.
func (s *Server) Draining() bool { return s.draining.Load() }

// Patterns lists every registered route pattern, for docs and tests.
func (s *Server) Patterns() []string {
	out := make([]string, len(s.routes))
	for i, rt := range s.routes {
		out[i] = rt.pattern
	}
	return out
}

// Shutdown marks s as draining, then stops srv: no new connections, and
// in-flight requests get at most timeout to finish.
func Shutdown(ctx context.Context, srv *http.Server, s *Server, timeout time.Duration) error {
	s.Drain()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
	defer cancel()
	return srv.Shutdown(ctx)
}
