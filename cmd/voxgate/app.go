package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"runtime/debug"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/voxgate/voxgate/audit"
	"github.com/voxgate/voxgate/billing"
	"github.com/voxgate/voxgate/internal/auth"
	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/internal/database"
	"github.com/voxgate/voxgate/internal/server"
	"github.com/voxgate/voxgate/internal/spool"
	"github.com/voxgate/voxgate/internal/telemetry/otlp"
	"github.com/voxgate/voxgate/lifecycle"
	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/quota"
	"github.com/voxgate/voxgate/tools"
	"github.com/voxgate/voxgate/web"
)

// Main is the running gateway: every part, wired by hand. Tests boot the
// same Main on :0.
type Main struct {
	Config *config.Config
	Logger *slog.Logger

	// Wrap, when set, wraps the HTTP handler; tests use it to add routes.
	Wrap func(http.Handler) http.Handler
	// Getenv reads webhook tool secrets (secret_env); nil means os.Getenv.
	Getenv func(string) string
	// Now is the clock the models' shutdown dates are read by; nil means
	// time.Now.
	Now func() time.Time
	// RouterNow is the clock the text router's breakers read (their
	// 5-minute window, their minute open); nil means time.Now. Tests move
	// it through the minute instead of waiting it out.
	RouterNow func() time.Time

	Pool     *pgxpool.Pool
	Verifier *auth.Verifier
	Server   *server.Server
	Registry *prometheus.Registry
	Quota    *quota.Service
	Tools    *tools.Executor
	// MCP is nil when no MCP servers are configured.
	MCP    *tools.MCPSource
	Ledger *billing.Ledger
	// Finance serves the finance routes' reads, from ReadPool when
	// database.read_url is set (nil otherwise: the primary's).
	Finance  *billing.Finance
	ReadPool *pgxpool.Pool
	// Web serves the /admin and /demo pages and their assets.
	Web *web.Pages
	// Audit is the AI audit log (DESIGN §12), which admins read.
	Audit *audit.Log
	// Spool is the durable path of usage records and settlements the
	// database did not take in time.
	Spool *spool.Spool
	// Voice is the voice control plane, or off when no provider is
	// configured (no OPENAI_API_KEY).
	Voice voiceService
	// Router is the text router over the configured providers and routes
	// (DESIGN §11): chat's provider.
	Router *llm.Router
	// Chat is the chat service, or off when no provider of chat.route is
	// configured.
	Chat chatService
	// Completions serves the OpenAI-compatible endpoints over the same
	// router and unit.Env as chat, or off with it.
	Completions completionsService
	// Responses serves POST /v1/responses and its stored responses over
	// the same router and unit.Env, or off with chat.
	Responses responsesService
	// Lifecycle re-checks the models' shutdown dates daily; nil when no
	// provider is configured.
	Lifecycle *lifecycle.Checker
	// Tracing exports spans over OTLP when the OTEL_* variables ask for it
	// (docs/operations.md, "Traces"); off, it does nothing.
	Tracing *otlp.Tracing

	httpServer    *http.Server
	metricsServer *http.Server
	ln            net.Listener
	metricsLn     net.Listener
	serveErr      chan error

	stopBackground context.CancelFunc
	background     sync.WaitGroup
}

// Run opens the database, migrates it, builds the server and starts
// listening. It returns once the listener is up; Close stops everything.
func (m *Main) Run(ctx context.Context) error {
	cfg, log := m.Config, m.Logger
	if cfg.Database.URL == "" {
		return errors.New("VOXGATE_DATABASE_URL is not set (or run 'voxgate dev' for a local database)")
	}
	var err error
	if m.Tracing, err = otlp.Setup(ctx, buildVersion()); err != nil {
		return err
	}
	if m.Pool, err = database.Open(ctx, cfg.Database.URL, cfg.Database.MaxConns, cfg.Database.MinConns); err != nil {
		return err
	}
	if _, err := migrate(ctx, m.Pool, cfg, log); err != nil {
		return err
	}
	if m.Verifier, err = auth.NewVerifier(auth.Params{
		Secret:    []byte(cfg.Secrets.JWTSecret),
		JWKSURL:   cfg.Auth.JWKSURL,
		Issuer:    cfg.Auth.Issuer,
		Audience:  cfg.Auth.Audience,
		CacheSize: cfg.Auth.CacheSize,
		Logger:    log,
	}); err != nil {
		return err
	}
	m.Registry = prometheus.NewRegistry()
	m.Registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		database.NewPoolCollector(m.Pool))
	if m.Quota, err = quota.New(quota.Params{Pool: m.Pool, Config: cfg.Quota, Registerer: m.Registry, Logger: log}); err != nil {
		return err
	}
	if m.Tools, err = newTools(m, getenvOr(m.Getenv)); err != nil {
		return err
	}
	if m.Ledger, err = newBilling(m); err != nil {
		return err
	}
	if m.Finance, err = newFinance(ctx, m); err != nil {
		return err
	}
	m.Audit = audit.New(m.Pool)
	if m.Web, err = web.New(directOrigins(cfg)...); err != nil {
		return err
	}
	if m.Spool, err = newSpool(ctx, m); err != nil {
		return err
	}
	if m.Router, err = newRouter(m); err != nil {
		return err
	}
	// After the router: live voice sessions run their delegations on it.
	if m.Voice, err = newVoice(m); err != nil {
		return err
	}
	if m.Chat, m.Completions, err = newChat(m); err != nil {
		return err
	}
	if m.Lifecycle, err = newLifecycle(ctx, m); err != nil {
		return err
	}
	bg, stop := context.WithCancel(context.WithoutCancel(ctx))
	m.stopBackground = stop
	m.background.Go(func() { m.Quota.Run(bg) })
	m.background.Go(func() { m.Ledger.RunFold(bg) })
	m.background.Go(func() { m.Ledger.RunPartitions(bg, cfg.Ledger.RetentionMonths) })
	m.background.Go(func() { m.Spool.Run(bg) }) // every kind is registered: drain what an earlier run left
	if m.MCP != nil {
		m.background.Go(func() { m.MCP.Run(bg) })
	}
	m.background.Go(func() { m.Voice.Run(bg) })
	m.background.Go(func() { m.Chat.Run(bg) })
	if m.Lifecycle != nil {
		m.background.Go(func() { m.Lifecycle.Run(bg) })
	}
	if m.Server, err = server.New(server.Params{
		Config: cfg, Pool: m.Pool, Verifier: m.Verifier, Logger: log, Registry: m.Registry,
	}); err != nil {
		return err
	}
	m.Server.Mount(routes(m))
	var h http.Handler = m.Server
	if m.Wrap != nil {
		h = m.Wrap(h)
	}
	if m.ln, err = net.Listen("tcp", cfg.Server.Addr); err != nil {
		return err
	}
	// No ReadTimeout or WriteTimeout here: they would cut off streams. The
	// server bounds body reads, and non-streaming routes' work and writes,
	// per request.
	//
	// HTTP/2 without TLS (prior knowledge) beside HTTP/1.1 on the one port:
	// TLS ends at the load balancer, and one that speaks HTTP/2 to its
	// backends carries an app's streams over shared connections, each held
	// stream then costing a replica no connection, buffers or reader
	// goroutine of its own (docs/chat.md measures both).
	protocols := new(http.Protocols)
	protocols.SetHTTP1(true)
	protocols.SetUnencryptedHTTP2(true)
	m.httpServer = &http.Server{
		Handler:           h,
		ReadHeaderTimeout: cfg.Server.ReadTimeout,
		IdleTimeout:       2 * time.Minute,
		BaseContext:       m.Server.BaseContext,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		Protocols:         protocols,
	}
	m.serveErr = make(chan error, 2)
	go func() { m.serveErr <- m.httpServer.Serve(m.ln) }()
	if cfg.Server.MetricsAddr != "" {
		mln, err := net.Listen("tcp", cfg.Server.MetricsAddr)
		if err != nil {
			return fmt.Errorf("metrics listener: %w", err)
		}
		m.metricsLn = mln
		m.metricsServer = &http.Server{Handler: m.Server.MetricsHandler(), ReadHeaderTimeout: 5 * time.Second}
		go func() { m.serveErr <- m.metricsServer.Serve(mln) }()
	}
	log.Info("voxgate listening", "addr", m.ln.Addr().String())
	return nil
}

// Addr is the address the gateway listens on (useful with :0).
func (m *Main) Addr() string { return m.ln.Addr().String() }

// URL is the gateway's base URL on loopback.
func (m *Main) URL() string {
	_, port, _ := net.SplitHostPort(m.Addr())
	return "http://127.0.0.1:" + port
}

// MetricsURL is the base URL of the separate metrics listener on loopback,
// or "" when metrics are served on the main listener.
func (m *Main) MetricsURL() string {
	if m.metricsLn == nil {
		return ""
	}
	_, port, _ := net.SplitHostPort(m.metricsLn.Addr().String())
	return "http://127.0.0.1:" + port
}

// Wait returns when the HTTP server stops on its own (a listener failure).
func (m *Main) Wait() <-chan error { return m.serveErr }

// shutdownMargin is what Close may take past the shutdown timeout
// (DESIGN §13): the server's grace for cancelled requests to answer, then
// handing unfinished usage to the spool and closing the pool.
const shutdownMargin = 2 * time.Second

// Close drains: /readyz turns 503 (for the drain delay, which is part of
// the shutdown timeout), new connections stop, in-flight requests finish
// within what is left of the timeout (past it they are cancelled and
// answer 503), usage the database did not take is spooled, then the pool
// closes. The voice hand-over runs beside the drain: held calls outlast
// any request. Close returns within the shutdown timeout + shutdownMargin
// whatever the database does; what is still running then (a call that
// ignores its context) is left behind and reported.
func (m *Main) Close(ctx context.Context) error {
	deadline := time.Now().Add(m.Config.Server.ShutdownTimeout + shutdownMargin)
	var errs []error
	handedOver := make(chan error, 1)
	if m.Voice != nil { // nil when Run failed before building it
		go func() { m.Voice.Close(); handedOver <- nil }() // held sideband calls go on, for another replica to adopt
	} else {
		handedOver <- nil
	}
	if m.Server != nil && m.Config.Server.DrainDelay > 0 {
		m.Server.Drain()
		m.Logger.Info("draining: /readyz answers 503", "delay", m.Config.Server.DrainDelay.String())
		select {
		case <-time.After(m.Config.Server.DrainDelay):
		case <-ctx.Done():
		}
	}
	if m.httpServer != nil {
		errs = append(errs, m.Server.Shutdown(m.httpServer, m.Config.Server.ShutdownTimeout-m.Config.Server.DrainDelay))
	}
	if m.metricsServer != nil {
		errs = append(errs, m.metricsServer.Close())
	}
	if m.Spool != nil {
		// Requests cancelled by the shutdown are ending now. Their usage
		// goes to the database if it answers soon, else to the spool
		// without waiting on the database any longer.
		soon, cancel := context.WithDeadline(context.Background(), deadline.Add(-shutdownMargin/4))
		_ = m.Spool.Wait(soon)
		cancel()
		m.Spool.Stop()
		errs = append(errs, within(deadline, "usage being handed to the spool", func() error {
			wctx, cancel := context.WithDeadline(context.Background(), deadline)
			defer cancel()
			return m.Spool.Wait(wctx)
		}))
		m.Spool.Close() // the directory is free for the next process to start on it
	}
	if m.stopBackground != nil {
		m.stopBackground()
		errs = append(errs, within(deadline, "background work", func() error { m.background.Wait(); return nil }))
	}
	errs = append(errs, within(deadline, "the voice hand-over", func() error { return <-handedOver }))
	if m.MCP != nil {
		errs = append(errs, within(deadline, "MCP servers", m.MCP.Close))
	}
	if m.Verifier != nil {
		m.Verifier.Close()
	}
	if m.Pool != nil {
		errs = append(errs, within(deadline, "the database pool (connections still in use)", func() error { m.Pool.Close(); return nil }))
	}
	if m.ReadPool != nil {
		errs = append(errs, within(deadline, "the read pool (connections still in use)", func() error { m.ReadPool.Close(); return nil }))
	}
	if m.Tracing.On() {
		// Last, so the spans of the requests that drained go out too.
		tctx, cancel := context.WithDeadline(context.Background(), deadline)
		errs = append(errs, m.Tracing.Shutdown(tctx))
		cancel()
	}
	return errors.Join(errs...)
}

// buildVersion is the module's version as built (a tagged release), or
// its VCS revision, for the traces' service.version.
func buildVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" {
			return s.Value
		}
	}
	return "devel"
}

// within runs f and waits for it until deadline. Past it, f is left to
// finish on its own (the process is exiting) and the error names what.
func within(deadline time.Time, what string, f func() error) error {
	done := make(chan error, 1)
	go func() { done <- f() }()
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-t.C:
		return fmt.Errorf("shutdown: %s still running at the shutdown deadline; not waiting for it", what)
	}
}
