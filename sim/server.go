package sim

import (
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"sync"

	"github.com/voxgate/voxgate/sim/anthropic"
	"github.com/voxgate/voxgate/sim/core"
	"github.com/voxgate/voxgate/sim/gemini"
	"github.com/voxgate/voxgate/sim/live"
	"github.com/voxgate/voxgate/sim/openai"
	"github.com/voxgate/voxgate/sim/realtime"
	"github.com/voxgate/voxgate/sim/responses"
)

// Server is an OpenAI-compatible simulator. It is an http.Handler; mount it
// on an http.Server or httptest.Server. Call Close before shutting that
// server down so that hanging and streaming requests end.
type Server struct {
	gem      *gemini.Server
	anth     *anthropic.Server
	oa       *openai.Server
	env      *core.Env
	rts      *realtime.Server
	live     *live.Server
	resp     *responses.Server
	mux      *http.ServeMux
	closeOne sync.Once
}

// New checks cfg and builds a simulator.
func New(cfg Config) (*Server, error) {
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("sim: config: %w", err)
	}
	script, err := openai.CompileScript(cfg.Script)
	if err != nil {
		return nil, fmt.Errorf("sim: config: script: %w", err)
	}
	kinds := realtime.FaultKinds()
	kinds[openai.EndpointChatCompletions] = openai.ChatFaultKinds()
	maps.Copy(kinds, gemini.FaultKinds())
	kinds[anthropic.EndpointMessages] = anthropic.FaultKinds()
	kinds[responses.Endpoint] = responses.FaultKinds()
	maps.Copy(kinds, live.FaultKinds())
	endpoints := make([]string, 0, len(kinds)+1)
	for ep := range kinds {
		endpoints = append(endpoints, ep)
	}
	endpoints = append(endpoints, openai.EndpointModels, openai.EndpointOrgUsageCompletions, openai.EndpointOrgCosts, responses.EndpointOne)
	s := &Server{
		env: &core.Env{Latency: cfg.latency(), Keys: core.NameSet(cfg.Keys), Faults: core.NewInjector(kinds, cfg.Seed),
			Stats: core.NewStatsBook(endpoints), Clock: cfg.Now, Log: cfg.Logger, MaxBody: cfg.MaxBodyBytes,
			Done: make(chan struct{})},
	}
	if s.env.Log == nil {
		s.env.Log = slog.New(slog.DiscardHandler)
	}
	if s.env.MaxBody == 0 {
		s.env.MaxBody = defaultMaxBodyBytes
	}
	s.oa = openai.New(s.env, script, cfg.Models, cfg.ShutdownDates, cfg.Chat)
	s.anth = anthropic.New(s.env, s.oa)
	s.resp = responses.New(s.env, s.oa)
	s.gem = gemini.New(s.env, s.oa)
	if s.rts, err = realtime.New(s.env, s.oa, cfg.Realtime, cfg.WebRTC); err != nil {
		return nil, fmt.Errorf("sim: %w", err)
	}
	s.live = live.New(s.env, s.oa, s.rts, cfg.Live)
	for i, f := range cfg.Faults {
		if _, err := s.env.Faults.Add(f); err != nil {
			return nil, fmt.Errorf("sim: config: faults[%d]: %w", i, err)
		}
	}
	s.mux = s.routes()
	return s, nil
}

// routes lists the simulator's whole HTTP surface.
func (s *Server) routes() *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle("POST "+openai.EndpointChatCompletions, s.env.Endpoint(openai.EndpointChatCompletions, s.oa.ChatCompletions))
	mux.Handle("POST "+anthropic.EndpointMessages, s.env.Endpoint(anthropic.EndpointMessages, s.anth.Messages))
	mux.Handle("POST "+responses.Endpoint, s.env.Endpoint(responses.Endpoint, s.resp.Create))
	mux.Handle("GET "+responses.EndpointOne, s.env.Endpoint(responses.EndpointOne, s.resp.Get))
	mux.Handle("DELETE "+responses.EndpointOne, s.env.Endpoint(responses.EndpointOne, s.resp.Delete))
	mux.Handle("GET "+responses.EndpointOne+"/input_items", s.env.Endpoint(responses.EndpointOne, s.resp.InputItems))
	mux.Handle("POST "+realtime.EndpointRealtimeClientSecrets, s.env.Endpoint(realtime.EndpointRealtimeClientSecrets, s.rts.MintSecret))
	mux.Handle("POST "+realtime.EndpointRealtimeCalls, realtime.CORSCalls(s.env.Endpoint(realtime.EndpointRealtimeCalls, s.rts.CreateCall)))
	mux.Handle("OPTIONS "+realtime.EndpointRealtimeCalls, realtime.CORSCalls(nil))
	mux.Handle("POST "+realtime.EndpointRealtimeHangup, s.env.Endpoint(realtime.EndpointRealtimeHangup, s.rts.Hangup))
	mux.Handle("GET "+realtime.EndpointRealtime, s.env.Endpoint(realtime.EndpointRealtime, s.rts.Socket))
	mux.Handle("GET "+openai.EndpointModels, s.env.Endpoint(openai.EndpointModels, s.oa.ListModels))
	mux.Handle("POST "+live.EndpointSessions, s.env.Endpoint(live.EndpointSessions, s.live.Create))
	mux.Handle("GET "+live.EndpointAttach, s.env.Endpoint(live.EndpointAttach, s.live.Attach))
	mux.Handle("GET "+openai.EndpointOrgUsageCompletions, s.env.Endpoint(openai.EndpointOrgUsageCompletions, s.oa.OrgUsageCompletions))
	mux.Handle("GET "+openai.EndpointOrgCosts, s.env.Endpoint(openai.EndpointOrgCosts, s.oa.OrgCosts))
	mux.Handle("GET "+anthropic.EndpointOrgCost, s.env.Endpoint(anthropic.EndpointOrgCost, s.anth.OrgCost))
	mux.Handle("GET "+anthropic.EndpointOrgUsage, s.env.Endpoint(anthropic.EndpointOrgUsage, s.anth.OrgUsage))
	mux.Handle(gemini.Route, s.gem.Handler())
	mux.HandleFunc("GET /sim/calls", s.rts.GetCalls)
	mux.HandleFunc("GET /sim/live/sessions", s.live.GetSessions)

	mux.HandleFunc("POST /sim/faults", s.postFaults)
	mux.HandleFunc("GET /sim/faults", s.getFaults)
	mux.HandleFunc("DELETE /sim/faults", s.deleteFaults)
	mux.HandleFunc("GET /sim/stats", s.getStats)
	mux.HandleFunc("DELETE /sim/stats", s.deleteStats)

	// Everything else answers like the real API does for an unknown route.
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Request-Id", core.NewRequestID())
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
		close(s.env.Done)
		s.rts.CloseAll()
		s.live.CloseAll()
	})
	return nil
}

// Stats returns the per-endpoint counters, as GET /sim/stats does.
func (s *Server) Stats() core.Stats { return s.env.Stats.Snapshot() }

// ResetStats zeroes the counters, as DELETE /sim/stats does.
func (s *Server) ResetStats() { s.env.Stats.Reset() }

// AddFault installs a fault, as POST /sim/faults does, and returns it with
// its ID and defaults filled in.
func (s *Server) AddFault(f core.Fault) (core.Fault, error) { return s.env.Faults.Add(f) }

// Faults lists the active faults.
func (s *Server) Faults() []core.Fault { return s.env.Faults.List() }

// ClearFaults removes every fault, as DELETE /sim/faults does.
func (s *Server) ClearFaults() { s.env.Faults.Clear() }

// Calls lists live calls and the most recently ended ones, oldest first.
func (s *Server) Calls() []realtime.CallStats { return s.rts.Calls() }

// Call returns one call's counters.
func (s *Server) Call(id string) (realtime.CallStats, bool) { return s.rts.Call(id) }

// LiveSessions lists GPT-Live sessions, live and the most recently closed,
// oldest first.
func (s *Server) LiveSessions() []live.Stats { return s.live.LiveSessions() }

// LiveSession returns one session's counters and records.
func (s *Server) LiveSession(id string) (live.Stats, bool) { return s.live.LiveSession(id) }

// GeminiStores counts generateContent requests by the store field they
// sent (unset, true, false).
func (s *Server) GeminiStores() gemini.StoreCounts { return s.gem.Stores() }
