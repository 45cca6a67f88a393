package live

import (
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/gorilla/websocket"
	"github.com/voxgate/voxgate/sim/core"
	"github.com/voxgate/voxgate/sim/openai"
	"github.com/voxgate/voxgate/sim/realtime"
)

// Endpoint names of the GPT-Live routes in faults and stats.
const (
	EndpointSessions = "/v1/live/sessions"
	EndpointAttach   = "/v1/live/sessions/{session_id}/attach"
)

// GPT-Live fault kinds.
const (
	// FaultExpired, drawn when a session is created, makes it expire
	// IntervalMS (session clock) after creation: session.closed, reason
	// expired.
	FaultExpired core.FaultKind = "expired"
	// FaultSidebandCutAtClose, drawn at attach, cuts that sideband without
	// a close frame when its session closes, just before session.closed:
	// the backend never reads the final usage.
	FaultSidebandCutAtClose core.FaultKind = "sideband_cut_at_close"
	// FaultUsageRegress, drawn at each session.usage.updated, sends right
	// after it a stale one with half its usage.seconds: a report out of
	// order, which a backend that keeps the last figure would bill.
	FaultUsageRegress core.FaultKind = "usage_regress"
)

func FaultKinds() map[string][]core.FaultKind {
	return map[string][]core.FaultKind{
		EndpointSessions: append(realtime.HTTPFaultKinds(), core.FaultSDPReject, FaultExpired, core.FaultContentFilter, FaultUsageRegress),
		EndpointAttach:   append(realtime.HTTPFaultKinds(), realtime.FaultSidebandNotFound, core.FaultSidebandDrop, FaultSidebandCutAtClose),
	}
}

// Stats are one Live session's counters and records, for tests: GET
// /sim/live/sessions or Server.LiveSessions.
type Stats struct {
	ID          string     `json:"id"`
	Model       string     `json:"model"`
	Status      string     `json:"status"` // "active" or "closed"
	CloseReason string     `json:"close_reason,omitempty"`
	CreatedAt   time.Time  `json:"created_at"`
	ConnectedAt *time.Time `json:"connected_at,omitempty"`
	ClosedAt    *time.Time `json:"closed_at,omitempty"`
	// UsageSeconds is the last usage.seconds sent (the final one once
	// closed); BilledSeconds adds the start charge: a session is billed at
	// least 15 s, what it costs to create even if it never connects.
	UsageSeconds  float64 `json:"usage_seconds"`
	BilledSeconds float64 `json:"billed_seconds"`
	// UpdatedSeconds is the last session.usage.updated's usage.seconds:
	// what a sideband cut before session.closed saw last.
	UpdatedSeconds float64 `json:"updated_seconds"`
	EventsIn       int64   `json:"events_in"`
	EventsOut      int64   `json:"events_out"`
	Errors         int64   `json:"errors"`
	Sidebands      int64   `json:"sidebands"`
	Turns          int64   `json:"turns"`
	// Delegations are the ids of the delegations created, in order.
	Delegations      []string `json:"delegations"`
	Acknowledgements int64    `json:"acknowledgements"`
	// Applied are the client events the session acted on; RefusedClientEvents
	// the types of the phone's events its allowlist refused (not applied).
	Applied             []Applied `json:"applied"`
	RefusedClientEvents []string  `json:"refused_client_events"`
	AllowedClientEvents []string  `json:"allowed_client_events,omitempty"`
	// Transcript is what was heard and said, in order.
	Transcript          []Line `json:"transcript"`
	ReflectedAudioBytes int64  `json:"reflected_audio_bytes"`
	// PacketsOut counts the RTP packets of the model's voice sent on the
	// media track (Opus, 20 ms each).
	PacketsOut int64 `json:"packets_out"`
}

// Applied is one client event a session applied.
type Applied struct {
	Type         string  `json:"type"`
	Path         string  `json:"path"` // "datachannel" or "sideband"
	DelegationID *string `json:"delegation_id,omitempty"`
	Content      string  `json:"content,omitempty"`
	AtMS         int64   `json:"at_ms"`
}

// Line is one utterance on the session timeline.
type Line struct {
	Speaker string `json:"speaker"` // "user" or "model"
	Text    string `json:"text"`
	StartMS int64  `json:"start_ms"`
	EndMS   int64  `json:"end_ms"`
}

// maxRecorded bounds each list in LiveStats, so a benchmark's long session
// does not grow without bound.
const maxRecorded = 1000

func appendCapped[T any](list []T, v T) []T {
	if len(list) >= maxRecorded {
		list = list[1:]
	}
	return append(list, v)
}

type liveCounters struct {
	mu sync.Mutex
	s  Stats
}

func (c *liveCounters) update(fn func(*Stats)) {
	c.mu.Lock()
	fn(&c.s)
	c.mu.Unlock()
}

func (c *liveCounters) snapshot() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.s
	s.Delegations = slices.Clone(c.s.Delegations)
	s.Applied = slices.Clone(c.s.Applied)
	s.RefusedClientEvents = slices.Clone(c.s.RefusedClientEvents)
	s.Transcript = slices.Clone(c.s.Transcript)
	s.BilledSeconds = max(liveStartCharge, s.UsageSeconds)
	return s
}

func keysOf(m map[string]bool) []string {
	if m == nil {
		return nil
	}
	return slices.Sorted(maps.Keys(m))
}

// liveState is the GPT-Live half of a Server: its sessions, live and the
// most recently closed.
type liveState struct {
	cfg   Config
	rules []liveRule

	mu       sync.Mutex
	closed   bool
	sessions map[string]*liveSession
	ended    []*liveSession
	wg       sync.WaitGroup
}

// Server serves GPT-Live over what the simulator shares, the Chat
// Completions engine whose script and bill it uses, and the Realtime
// surface whose peers and sinks it borrows.
type Server struct {
	env  *core.Env
	oa   *openai.Server
	rts  *realtime.Server
	live *liveState
}

// New is the GPT-Live surface over env, oa and rts.
func New(env *core.Env, oa *openai.Server, rts *realtime.Server, cfg Config) *Server {
	return &Server{env: env, oa: oa, rts: rts, live: newLiveState(cfg, rts.Heard())}
}

// CloseAll closes every session.
func (s *Server) CloseAll() { s.live.closeAll() }

func newLiveState(cfg Config, heard string) *liveState {
	return &liveState{cfg: cfg.withDefaults(heard), rules: compileLiveRules(cfg.Rules), sessions: map[string]*liveSession{}}
}

func (lv *liveState) start(ls *liveSession) bool {
	lv.mu.Lock()
	defer lv.mu.Unlock()
	if lv.closed {
		return false
	}
	lv.sessions[ls.id] = ls
	lv.wg.Go(ls.run)
	return true
}

func (lv *liveState) get(id string) *liveSession {
	lv.mu.Lock()
	defer lv.mu.Unlock()
	return lv.sessions[id]
}

func (lv *liveState) retire(ls *liveSession) {
	lv.mu.Lock()
	defer lv.mu.Unlock()
	delete(lv.sessions, ls.id)
	lv.ended = append(lv.ended, ls)
	if len(lv.ended) > realtime.KeptEnded {
		lv.ended = append(lv.ended[:0], lv.ended[len(lv.ended)-realtime.KeptEnded:]...)
	}
}

func (lv *liveState) snapshot() []Stats {
	lv.mu.Lock()
	all := append([]*liveSession(nil), lv.ended...)
	for _, ls := range lv.sessions {
		all = append(all, ls)
	}
	lv.mu.Unlock()
	out := make([]Stats, 0, len(all))
	for _, ls := range all {
		out = append(out, ls.stats.snapshot())
	}
	slices.SortFunc(out, func(a, b Stats) int { return a.CreatedAt.Compare(b.CreatedAt) })
	return out
}

func (lv *liveState) closeAll() {
	lv.mu.Lock()
	lv.closed = true
	all := slices.Collect(maps.Values(lv.sessions))
	lv.mu.Unlock()
	var wg sync.WaitGroup
	for _, ls := range all {
		wg.Go(ls.stop)
	}
	wg.Wait()
	lv.wg.Wait()
}

// LiveSessions lists live sessions and the most recently closed, oldest
// first.
func (s *Server) LiveSessions() []Stats { return s.live.snapshot() }

// LiveSession returns one session's counters and records.
func (s *Server) LiveSession(id string) (Stats, bool) {
	for _, st := range s.live.snapshot() {
		if st.ID == id {
			return st, true
		}
	}
	return Stats{}, false
}

func (s *Server) GetSessions(w http.ResponseWriter, _ *http.Request) {
	core.WriteJSON(w, http.StatusOK, map[string][]Stats{"sessions": s.LiveSessions()})
}

// Create serves POST /v1/live/sessions: the server key, a strict
// JSON config and the phone's SDP offer in; 201 with the session id and the
// SDP answer of a pion peer out. The POST starts the session.
func (s *Server) Create(w http.ResponseWriter, r *http.Request) error {
	if err := s.env.Authorize(r); err != nil {
		return err
	}
	body, err := s.env.ReadBodyLimit(w, r, min(s.env.MaxBody, realtime.MaxCallBytes))
	if err != nil {
		return err
	}
	set, offer, apiErr := decodeLiveCreate(body)
	if apiErr != nil {
		return apiErr
	}
	if err := s.oa.CheckModel(set.model); err != nil {
		return err
	}
	if err := realtime.CheckOffer(offer); err != nil {
		return liveSDPError(err.(*core.APIError).Message)
	}
	var expireAfter time.Duration
	if f := s.env.Faults.Take(EndpointSessions, set.model, append(realtime.HTTPFaultKinds(), core.FaultSDPReject, FaultExpired)...); f != nil {
		s.env.Stats.Fault(EndpointSessions, f.Kind)
		switch f.Kind {
		case core.FaultSDPReject:
			return liveSDPError("the simulator rejected the offer (sdp_reject fault)")
		case FaultExpired:
			expireAfter = time.Duration(f.IntervalMS) * time.Millisecond
		default:
			_, err := s.oa.ResponseFault(r.Context(), f, false)
			return err
		}
	}
	ls := s.newLiveSession(set, expireAfter)
	answer, err := ls.peer.Answer(r.Context(), s.rts.PeerAPI(), offer)
	if err == nil && !s.live.start(ls) {
		err = core.ErrUnavailable(1) // the simulator is shutting down
	}
	if err != nil {
		ls.peer.Close()
		var apiErr *core.APIError
		if errors.As(err, &apiErr) {
			return apiErr
		}
		return liveSDPError(err.Error())
	}
	writeLiveCreated(w, ls.id, answer)
	return nil
}

func liveSDPError(detail string) *core.APIError {
	e := realtime.ErrInvalidSDP(detail)
	e.Param = "transport.sdp"
	return e
}

func errLiveNotFound(id string) *core.APIError {
	return &core.APIError{Status: http.StatusNotFound, Type: "invalid_request_error", Param: "session_id", Code: "session_not_found",
		Message: fmt.Sprintf("No active Live session found with id '%s'.", id)}
}

// Attach serves GET /v1/live/sessions/{session_id}/attach, the sideband:
// every event of the session from now on (nothing replayed), and the
// backend's commands. Closing the socket gracefully closes the session too
// unless the query says graceful_close=false.
func (s *Server) Attach(w http.ResponseWriter, r *http.Request) error {
	if err := s.env.Authorize(r); err != nil {
		return err
	}
	id := r.PathValue("session_id")
	ls := s.live.get(id)
	if ls == nil {
		return errLiveNotFound(id)
	}
	if f := s.env.Faults.Take(EndpointAttach, ls.set.model, realtime.FaultSidebandNotFound); f != nil {
		s.env.Stats.Fault(EndpointAttach, f.Kind)
		return errLiveNotFound(id)
	}
	dropAfter := -1
	if f := s.env.Faults.Take(EndpointAttach, ls.set.model, append(realtime.HTTPFaultKinds(), core.FaultSidebandDrop)...); f != nil {
		s.env.Stats.Fault(EndpointAttach, f.Kind)
		if f.Kind != core.FaultSidebandDrop {
			_, err := s.oa.ResponseFault(r.Context(), f, false)
			return err
		}
		dropAfter = max(1, f.AfterChunks)
	}
	graceful := r.URL.Query().Get("graceful_close") != "false"
	conn, err := realtime.Upgrader().Upgrade(w, r, nil)
	if err != nil {
		return nil // Upgrade has answered the client
	}
	conn.SetReadLimit(s.env.MaxBody)
	k := realtime.SocketSink(conn, true)
	k.DropAfter = dropAfter
	if f := s.env.Faults.Take(EndpointAttach, ls.set.model, FaultSidebandCutAtClose); f != nil {
		s.env.Stats.Fault(EndpointAttach, f.Kind)
		k.CutAtClose = true
	}
	if !ls.Join(k) {
		_ = conn.Close()
		return nil
	}
	for {
		_, data, err := conn.ReadMessage()
		if err != nil {
			ls.leaveClosing(k, graceful && websocket.IsCloseError(err, realtime.CloseNormal, realtime.CloseGoingAway))
			return nil
		}
		if !ls.Submit(data, k) {
			return nil
		}
	}
}
