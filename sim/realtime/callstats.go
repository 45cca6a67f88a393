package realtime

import (
	"maps"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/voxgate/voxgate/sim/core"
)

// CallStats are one WebRTC call's counters, for tests: GET /sim/calls or
// Server.Calls.
type CallStats struct {
	ID        string     `json:"id"`
	SessionID string     `json:"session_id"`
	Model     string     `json:"model"`
	Status    string     `json:"status"` // "active" or "ended"
	EndReason string     `json:"end_reason,omitempty"`
	CreatedAt time.Time  `json:"created_at"`
	EndedAt   *time.Time `json:"ended_at,omitempty"`
	// PacketsIn and PacketsOut count RTP packets received from the caller
	// and sent to it (echoes or silence).
	PacketsIn  int64 `json:"packets_in"`
	PacketsOut int64 `json:"packets_out"`
	// EventsIn counts client events received (any path); EventsOut server
	// events emitted, once each however many transports they reach.
	EventsIn  int64 `json:"events_in"`
	EventsOut int64 `json:"events_out"`
	Errors    int64 `json:"errors"`
	Responses int64 `json:"responses"`
	// ToolCalls counts function calls the model made; ToolOutputs the
	// function_call_output items that answered one, by the path they came by
	// ("datachannel", "sideband").
	ToolCalls   int64            `json:"tool_calls"`
	ToolOutputs map[string]int64 `json:"tool_outputs"`
	// CutToolCalls counts function calls of responses cut short (status
	// incomplete), which a client must not run.
	CutToolCalls int64 `json:"cut_tool_calls"`
	// ResponseCreates counts the client's response.create events the
	// session accepted; RefusedResponseCreates those refused because a
	// response was still active.
	ResponseCreates        int64 `json:"response_creates"`
	RefusedResponseCreates int64 `json:"refused_response_creates"`
	// IdleTimeouts counts server VAD idle timeouts (timeout_triggered).
	IdleTimeouts int64 `json:"idle_timeouts"`
	// Sidebands counts sideband sockets opened on the call.
	Sidebands int64 `json:"sidebands"`
}

// callCounters are a session's live counters. The RTP counters are atomic:
// they move 50 times a second per direction.
type callCounters struct {
	packetsIn, packetsOut atomic.Int64
	mu                    sync.Mutex
	s                     CallStats
}

func newCallCounters() *callCounters {
	return &callCounters{s: CallStats{ToolOutputs: map[string]int64{}}}
}

func (c *callCounters) update(fn func(*CallStats)) {
	c.mu.Lock()
	fn(&c.s)
	c.mu.Unlock()
}

func (c *callCounters) snapshot() CallStats {
	c.mu.Lock()
	s := c.s
	s.ToolOutputs = maps.Clone(c.s.ToolOutputs)
	c.mu.Unlock()
	s.PacketsIn, s.PacketsOut = c.packetsIn.Load(), c.packetsOut.Load()
	return s
}

// Calls lists live calls and the most recently ended ones, oldest first.
func (s *Server) Calls() []CallStats { return s.rt.snapshot() }

// Call returns one call's counters.
func (s *Server) Call(id string) (CallStats, bool) {
	for _, c := range s.rt.snapshot() {
		if c.ID == id {
			return c, true
		}
	}
	return CallStats{}, false
}

func (s *Server) GetCalls(w http.ResponseWriter, _ *http.Request) {
	core.WriteJSON(w, http.StatusOK, map[string][]CallStats{"calls": s.Calls()})
}
