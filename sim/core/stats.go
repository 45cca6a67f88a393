package core

import (
	"sync"
	"time"
)

// EndpointStats counts what one endpoint has seen since start (or the last
// DELETE /sim/stats).
type EndpointStats struct {
	Requests     int64               `json:"requests"`
	InFlight     int64               `json:"in_flight"`
	FaultsServed int64               `json:"faults_served"`
	FaultsByKind map[FaultKind]int64 `json:"faults_by_kind"`
	// CancelledByClient counts requests the client abandoned (disconnect or
	// cancelled context) before the simulator finished answering.
	CancelledByClient int64 `json:"cancelled_by_client"`
	// LastCancelledAt is when the latest cancellation was noticed, and
	// LastCancelAfterMS how long that request had been running: a test can
	// check that a client gave up within its deadline.
	LastCancelledAt   *time.Time `json:"last_cancelled_at,omitempty"`
	LastCancelAfterMS int64      `json:"last_cancel_after_ms,omitempty"`
	// ReasoningItemsAccepted counts reasoning items clients carried back
	// in their input and the endpoint accepted (the Responses API's,
	// verified by encrypted_content or id): a test sees that a gateway
	// kept a reasoning model's reasoning across a tool call.
	ReasoningItemsAccepted int64 `json:"reasoning_items_accepted,omitempty"`
}

// Stats is the body of GET /sim/stats: counters per endpoint path.
type Stats struct {
	Endpoints map[string]EndpointStats `json:"endpoints"`
}

// StatsBook keeps per-endpoint counters. The endpoint set is fixed at New,
// so the map itself is read-only and only entries are locked.
type StatsBook struct {
	endpoints map[string]*endpointCounters
}

type endpointCounters struct {
	mu sync.Mutex
	s  EndpointStats
}

func NewStatsBook(endpoints []string) *StatsBook {
	b := &StatsBook{endpoints: make(map[string]*endpointCounters, len(endpoints))}
	for _, ep := range endpoints {
		b.endpoints[ep] = &endpointCounters{s: EndpointStats{FaultsByKind: map[FaultKind]int64{}}}
	}
	return b
}

func (b *StatsBook) update(endpoint string, fn func(*EndpointStats)) {
	c := b.endpoints[endpoint]
	if c == nil {
		return
	}
	c.mu.Lock()
	fn(&c.s)
	c.mu.Unlock()
}

func (b *StatsBook) Begin(endpoint string) {
	b.update(endpoint, func(s *EndpointStats) { s.Requests++; s.InFlight++ })
}

func (b *StatsBook) End(endpoint string) {
	b.update(endpoint, func(s *EndpointStats) { s.InFlight-- })
}

func (b *StatsBook) Fault(endpoint string, k FaultKind) {
	b.update(endpoint, func(s *EndpointStats) { s.FaultsServed++; s.FaultsByKind[k]++ })
}

// Reasoning counts n reasoning items an endpoint accepted.
func (b *StatsBook) Reasoning(endpoint string, n int) {
	if n > 0 {
		b.update(endpoint, func(s *EndpointStats) { s.ReasoningItemsAccepted += int64(n) })
	}
}

func (b *StatsBook) Cancelled(endpoint string, started time.Time) {
	now := time.Now()
	b.update(endpoint, func(s *EndpointStats) {
		s.CancelledByClient++
		s.LastCancelledAt = &now
		s.LastCancelAfterMS = now.Sub(started).Milliseconds()
	})
}

func (b *StatsBook) Snapshot() Stats {
	out := Stats{Endpoints: make(map[string]EndpointStats, len(b.endpoints))}
	for ep, c := range b.endpoints {
		c.mu.Lock()
		s := c.s
		s.FaultsByKind = make(map[FaultKind]int64, len(c.s.FaultsByKind))
		for k, v := range c.s.FaultsByKind {
			s.FaultsByKind[k] = v
		}
		c.mu.Unlock()
		out.Endpoints[ep] = s
	}
	return out
}

// Reset zeroes the counters but keeps InFlight, which is still true.
func (b *StatsBook) Reset() {
	for _, c := range b.endpoints {
		c.mu.Lock()
		c.s = EndpointStats{InFlight: c.s.InFlight, FaultsByKind: map[FaultKind]int64{}}
		c.mu.Unlock()
	}
}
