package sim

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/voxgate/voxgate/sim/core"
)

// EndpointChatCompletions is the endpoint name of POST /v1/chat/completions
// in faults and stats.
const EndpointChatCompletions = "/v1/chat/completions"

// chatFaultKinds are the faults the chat endpoint can serve.
func chatFaultKinds() []core.FaultKind {
	return []core.FaultKind{core.FaultRateLimit, core.FaultQuota, core.FaultServerError, core.FaultUnavailable, core.FaultTimeout,
		core.FaultMalformedJSON, core.FaultCutStream, core.FaultSlowDrip, core.FaultStreamError,
		core.FaultContextLength, core.FaultContentFilter, core.FaultReset, core.FaultNoDone, core.FaultSlowStart}
}

// Server is an OpenAI-compatible simulator. It is an http.Handler; mount it
// on an http.Server or httptest.Server. Call Close before shutting that
// server down so that hanging and streaming requests end.
type Server struct {
	latency  Latency
	keys     map[string]bool
	models   map[string]bool
	life     lifecycle
	script   *compiledScript
	chat     *chatState
	faults   *core.Injector
	rt       *realtimeState
	live     *liveState
	clock    func() time.Time
	stats    *core.StatsBook
	org      *orgBook
	mux      *http.ServeMux
	log      *slog.Logger
	maxBody  int64
	done     chan struct{}
	closeOne sync.Once
}

// New checks cfg and builds a simulator.
func New(cfg Config) (*Server, error) {
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("sim: config: %w", err)
	}
	script, err := compileScript(cfg.Script)
	if err != nil {
		return nil, fmt.Errorf("sim: config: script: %w", err)
	}
	kinds := realtimeFaultKinds()
	kinds[EndpointChatCompletions] = chatFaultKinds()
	maps.Copy(kinds, geminiFaultKinds())
	kinds[EndpointAnthropicMessages] = anthropicFaultKinds()
	maps.Copy(kinds, liveFaultKinds())
	endpoints := make([]string, 0, len(kinds)+1)
	for ep := range kinds {
		endpoints = append(endpoints, ep)
	}
	endpoints = append(endpoints, EndpointModels, EndpointOrgUsageCompletions, EndpointOrgCosts)
	rt, err := newRealtimeState(cfg.Realtime, cfg.WebRTC)
	if err != nil {
		return nil, fmt.Errorf("sim: %w", err)
	}
	s := &Server{
		latency: cfg.latency(),
		keys:    set(cfg.Keys),
		models:  set(cfg.Models),
		life:    newLifecycle(&cfg),
		script:  script,
		chat:    newChatState(cfg.Models, cfg.Chat),
		faults:  core.NewInjector(kinds, cfg.Seed),
		stats:   core.NewStatsBook(endpoints),
		org:     newOrgBook(),
		rt:      rt,
		live:    newLiveState(cfg.Live, rt.cfg.Heard),
		clock:   cfg.Now,
		log:     cfg.Logger,
		maxBody: cfg.MaxBodyBytes,
		done:    make(chan struct{}),
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.maxBody == 0 {
		s.maxBody = defaultMaxBodyBytes
	}
	for i, f := range cfg.Faults {
		if _, err := s.faults.Add(f); err != nil {
			return nil, fmt.Errorf("sim: config: faults[%d]: %w", i, err)
		}
	}
	s.mux = s.routes()
	return s, nil
}

// routes lists the simulator's whole HTTP surface.
func (s *Server) routes() *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle("POST "+EndpointChatCompletions, s.endpoint(EndpointChatCompletions, s.chatCompletions))
	mux.Handle("POST "+EndpointAnthropicMessages, s.endpoint(EndpointAnthropicMessages, s.anthropicMessages))
	mux.Handle("POST "+EndpointRealtimeClientSecrets, s.endpoint(EndpointRealtimeClientSecrets, s.mintSecret))
	mux.Handle("POST "+EndpointRealtimeCalls, corsCalls(s.endpoint(EndpointRealtimeCalls, s.createCall)))
	mux.Handle("OPTIONS "+EndpointRealtimeCalls, corsCalls(nil))
	mux.Handle("POST "+EndpointRealtimeHangup, s.endpoint(EndpointRealtimeHangup, s.hangup))
	mux.Handle("GET "+EndpointRealtime, s.endpoint(EndpointRealtime, s.realtimeSocket))
	mux.Handle("GET "+EndpointModels, s.endpoint(EndpointModels, s.listModels))
	mux.Handle("POST "+EndpointLiveSessions, s.endpoint(EndpointLiveSessions, s.createLiveSession))
	mux.Handle("GET "+EndpointLiveAttach, s.endpoint(EndpointLiveAttach, s.attachLive))
	mux.Handle("GET "+EndpointOrgUsageCompletions, s.endpoint(EndpointOrgUsageCompletions, s.orgUsageCompletions))
	mux.Handle("GET "+EndpointOrgCosts, s.endpoint(EndpointOrgCosts, s.orgCosts))
	mux.Handle(geminiRoute, s.gemini())
	mux.HandleFunc("GET /sim/calls", s.getCalls)
	mux.HandleFunc("GET /sim/live/sessions", s.getLiveSessions)

	mux.HandleFunc("POST /sim/faults", s.postFaults)
	mux.HandleFunc("GET /sim/faults", s.getFaults)
	mux.HandleFunc("DELETE /sim/faults", s.deleteFaults)
	mux.HandleFunc("GET /sim/stats", s.getStats)
	mux.HandleFunc("DELETE /sim/stats", s.deleteStats)

	// Everything else answers like the real API does for an unknown route.
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Request-Id", newRequestID())
		core.WriteAPIError(w, core.ErrInvalidURL(r.Method, r.URL.Path))
	})
	return mux
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// Close ends every request still hanging or streaming and hangs up every
// Realtime call and socket. It does not close listeners, which belong to the
// caller's http.Server.
func (s *Server) Close() error {
	s.closeOne.Do(func() {
		close(s.done)
		s.rt.closeAll()
		s.live.closeAll()
	})
	return nil
}

// Stats returns the per-endpoint counters, as GET /sim/stats does.
func (s *Server) Stats() core.Stats { return s.stats.Snapshot() }

// ResetStats zeroes the counters, as DELETE /sim/stats does.
func (s *Server) ResetStats() { s.stats.Reset() }

// AddFault installs a fault, as POST /sim/faults does, and returns it with
// its ID and defaults filled in.
func (s *Server) AddFault(f core.Fault) (core.Fault, error) { return s.faults.Add(f) }

// Faults lists the active faults.
func (s *Server) Faults() []core.Fault { return s.faults.List() }

// ClearFaults removes every fault, as DELETE /sim/faults does.
func (s *Server) ClearFaults() { s.faults.Clear() }

// handler is an endpoint body. Errors before the response starts are
// returned (an *APIError is written as is, anything else as a 500);
// errClientGone and errServerClosed mean there is no one to answer.
type handler func(w http.ResponseWriter, r *http.Request) error

// endpoint wraps a handler with the per-endpoint counters and error writing.
func (s *Server) endpoint(name string, h handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		s.stats.Begin(name)
		defer s.stats.End(name)
		// The real API names every answer, errors included, so a failure
		// can be reported by its id.
		w.Header().Set("X-Request-Id", newRequestID())
		err := h(w, r)
		var apiErr *core.APIError
		switch {
		case err == nil, errors.Is(err, core.ErrServerClosed):
		case errors.Is(err, core.ErrClientGone):
			s.stats.Cancelled(name, start)
		case errors.As(err, &apiErr):
			core.WriteAPIError(w, apiErr)
		default:
			s.log.ErrorContext(r.Context(), "sim: request failed", "endpoint", name, "err", err)
			core.WriteAPIError(w, core.ErrServer())
		}
	})
}

// authorize checks the Bearer key: any non-empty key, or one of cfg.Keys.
func (s *Server) authorize(r *http.Request) error { return s.checkKey(bearer(r)) }

// checkKey checks an API key; ephemeral keys are checked by authorizeRealtime.
func (s *Server) checkKey(key string) error {
	if key == "" {
		return core.ErrNoKey()
	}
	if len(s.keys) > 0 && !s.keys[key] || strings.HasPrefix(key, ephemeralPrefix) {
		return core.ErrBadKey()
	}
	return nil
}

// bearer returns the request's Bearer key, or "".
func bearer(r *http.Request) string {
	key, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		return ""
	}
	return strings.TrimSpace(key)
}

// readBody reads at most maxBody bytes; beyond that the request gets 413.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	return s.readBodyLimit(w, r, s.maxBody)
}

func (s *Server) readBodyLimit(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		return nil, core.ErrTooLarge(limit)
	case err != nil:
		return nil, core.ErrClientGone
	}
	return body, nil
}

// wait sleeps for d unless the client leaves or the simulator closes first.
func (s *Server) wait(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		if ctx.Err() != nil {
			return core.ErrClientGone
		}
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return core.ErrClientGone
	case <-s.done:
		return core.ErrServerClosed
	}
}

// hang blocks until the client gives up or the simulator closes.
func (s *Server) hang(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return core.ErrClientGone
	case <-s.done:
		return core.ErrServerClosed
	}
}

// tokenDelay is how long generating n tokens takes at the configured speed.
func (s *Server) tokenDelay(n int) time.Duration {
	if s.latency.TokensPerSecond <= 0 || n <= 0 {
		return 0
	}
	return time.Duration(float64(n) / s.latency.TokensPerSecond * float64(time.Second))
}

func set(list []string) map[string]bool {
	if len(list) == 0 {
		return nil
	}
	m := make(map[string]bool, len(list))
	for _, v := range list {
		m[v] = true
	}
	return m
}
