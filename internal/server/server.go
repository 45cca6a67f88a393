// Package server is voxgate's HTTP plumbing: the middleware every request
// passes through, the probes, the role wrappers and the bounded shutdown.
// It knows no domain: the route table lives with the wiring in cmd/voxgate,
// and domain packages supply the handlers.
package server

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/voxgate/voxgate/internal/auth"
	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/internal/httpx"
)

// ErrShuttingDown is the cause of every request context cancelled because
// the shutdown timeout ran out; handlers answer it 503, not as a client gone.
var ErrShuttingDown = errors.New("server: shutting down")

// Params are the parts a Server needs. New checks them.
type Params struct {
	Config   *config.Config
	Pool     *pgxpool.Pool
	Verifier *auth.Verifier
	Logger   *slog.Logger
	Registry *prometheus.Registry
}

// Server holds the middleware, the probes and the mounted routes.
type Server struct {
	cfg      *config.Config
	pool     *pgxpool.Pool
	verifier *auth.Verifier
	log      *slog.Logger
	registry *prometheus.Registry
	metrics  *httpMetrics
	draining atomic.Bool
	idPrefix string
	idSeq    atomic.Uint64
	handler  http.Handler
	routes   []Route

	// base is the parent of every request context; cancelRequests ends
	// them all when shutdown runs out of time.
	base           context.Context
	cancelRequests context.CancelCauseFunc
}

// New builds a server with no routes; Mount adds them.
func New(p Params) (*Server, error) {
	if p.Config == nil || p.Pool == nil || p.Verifier == nil || p.Registry == nil {
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
		idPrefix: newIDPrefix(),
	}
	s.base, s.cancelRequests = context.WithCancelCause(context.Background())
	var err error
	if s.metrics, err = newHTTPMetrics(p.Registry); err != nil {
		return nil, err
	}
	s.Mount(nil)
	return s, nil
}

// Mount serves routes, replacing any mounted before; call it before
// serving. Requests no route matches get a JSON 404 or 405.
func (s *Server) Mount(routes []Route) {
	mux := http.NewServeMux()
	for _, rt := range routes {
		h := rt.Handler
		if !rt.Stream {
			h = s.bounded(h)
		}
		mux.Handle(rt.Pattern, h)
	}
	mux.Handle(missPattern, httpx.Handle(misses(mux)))
	s.routes = routes
	s.handler = s.middleware(cleanPathsOnly(mux))
}

// ServeHTTP serves a request through the middleware and the mounted routes.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.handler.ServeHTTP(w, r)
}

// BaseContext is the http.Server BaseContext hook: every request context
// derives from it, so Shutdown can cancel requests that outlive it.
func (s *Server) BaseContext(net.Listener) context.Context { return s.base }

// Drain marks the server as draining: /readyz answers 503 so load balancers
// stop sending work, while requests in flight finish.
func (s *Server) Drain() { s.draining.Store(true) }

// Draining reports whether Drain was called.
func (s *Server) Draining() bool { return s.draining.Load() }

// Patterns lists every mounted route pattern, for docs and tests.
func (s *Server) Patterns() []string {
	out := make([]string, len(s.routes))
	for i, rt := range s.routes {
		out[i] = rt.Pattern
	}
	return out
}
