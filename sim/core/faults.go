package core

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
)

// FaultKind names a failure the simulator can inject. Each endpoint declares
// the kinds it can serve; Realtime endpoints add their own (SDP rejection,
// data-channel close) without touching the injector.
type FaultKind string

const (
	// FaultRateLimit answers 429 rate_limit_exceeded, with a retry-after
	// header when RetryAfter is set.
	FaultRateLimit FaultKind = "rate_limit"
	// FaultQuota answers 429 insufficient_quota: the account is out of
	// credit, which needs a person to act, so it has no retry-after.
	FaultQuota FaultKind = "insufficient_quota"
	// FaultServerError answers 500.
	FaultServerError FaultKind = "server_error"
	// FaultUnavailable answers 503, with a retry-after header when
	// RetryAfter is set.
	FaultUnavailable FaultKind = "unavailable"
	// FaultTimeout never answers: the request hangs until the client gives
	// up (or, with AfterChunks on a stream, stalls after that many chunks).
	FaultTimeout FaultKind = "timeout"
	// FaultMalformedJSON answers 200 with a body (or a stream event, after
	// AfterChunks chunks) that is not valid JSON.
	FaultMalformedJSON FaultKind = "malformed_json"
	// FaultCutStream closes the connection after AfterChunks chunks without
	// data: [DONE] (mid-body for non-streaming requests).
	FaultCutStream FaultKind = "cut_stream"
	// FaultSlowDrip sends each chunk (or piece of a non-streaming body)
	// Interval apart instead of at the configured speed.
	FaultSlowDrip FaultKind = "slow_drip"
	// FaultStreamError fails a stream that already answered 200: after
	// AfterChunks chunks comes an event data: {"error": …} and the stream
	// ends. A request that does not stream gets 500.
	FaultStreamError FaultKind = "stream_error"
	// FaultContextLength refuses the request as too long for the model's
	// context window, in each surface's own error shape (400).
	FaultContextLength FaultKind = "context_length"
	// FaultContentFilter stops an answer on the provider's safety policy,
	// in each surface's own shape. On a chat surface: a 400 refusal before
	// the answer, or, with AfterChunks on a stream, a stop for content
	// filtering after that many chunks. On Realtime: the response's reply
	// is cut in half and ends incomplete, reason content_filter.
	FaultContentFilter FaultKind = "content_filter"
	// FaultReset closes the connection before any response header is sent,
	// as a load balancer that drops a request does.
	FaultReset FaultKind = "reset"
	// FaultNoDone ends a stream cleanly (the connection closed in order)
	// right after its usage, without the surface's end marker (OpenAI's
	// data: [DONE], Anthropic's message_stop).
	FaultNoDone FaultKind = "no_done"

	// FaultSlowStart holds a chat answer's first chunk (or a whole
	// non-streaming body) IntervalMS instead of the model's time to first
	// token; the rest follows at the configured speed. It is a model that
	// answers, late: a first-content deadline must fire on it.
	FaultSlowStart FaultKind = "slow_start"

	// Realtime kinds.

	// FaultSDPReject refuses a call's SDP offer with 400, as when the API
	// cannot negotiate the offer.
	FaultSDPReject FaultKind = "sdp_reject"
	// FaultDataChannelClose closes a call's oai-events data channel after
	// AfterChunks server events (at least one: session.created); the call
	// and its audio go on.
	FaultDataChannelClose FaultKind = "datachannel_close"
	// FaultSidebandDrop cuts a /v1/realtime WebSocket (sideband or not)
	// without a close frame after AfterChunks server events (at least one).
	FaultSidebandDrop FaultKind = "sideband_drop"
	// FaultNoResponse ignores a response.create: no events, no error.
	FaultNoResponse FaultKind = "no_response"
)

// AnyEndpoint scopes a fault to every endpoint that supports its kind.
const AnyEndpoint = "*"

// Fault is one injected failure, set through POST /sim/faults or
// Config.Faults. It applies to the next Count matching requests, or to each
// matching request with probability Fraction (until cleared), or both (each
// with probability Fraction, Count times). With neither, Count is 1.
type Fault struct {
	// ID is assigned by the simulator.
	ID string `yaml:"id" json:"id,omitempty"`
	// Endpoint is a route path such as "/v1/chat/completions", or "*" (or
	// empty) for any endpoint that supports Kind.
	Endpoint string `yaml:"endpoint" json:"endpoint,omitempty"`
	// Model, when set, limits the fault to requests for that model.
	Model    string    `yaml:"model" json:"model,omitempty"`
	Kind     FaultKind `yaml:"kind" json:"kind"`
	Count    int       `yaml:"count" json:"count,omitempty"`
	Fraction float64   `yaml:"fraction" json:"fraction,omitempty"`
	// RetryAfter is the retry-after header, in seconds, for rate_limit and
	// unavailable. Zero means no header.
	RetryAfter int `yaml:"retry_after" json:"retry_after,omitempty"`
	// AfterChunks is how many stream chunks go out before cut_stream,
	// malformed_json, stream_error or timeout strikes.
	AfterChunks int `yaml:"after_chunks" json:"after_chunks,omitempty"`
	// IntervalMS is the slow_drip spacing, or the slow_start wait, in
	// milliseconds. Zero means 1000.
	IntervalMS int `yaml:"interval_ms" json:"interval_ms,omitempty"`
	// Served counts the requests this fault has been applied to.
	Served int `yaml:"-" json:"served"`
}

func (f *Fault) Validate() error {
	switch {
	case f.Kind == "":
		return errors.New("kind: required")
	case f.Count < 0:
		return fmt.Errorf("count: must not be negative, got %d", f.Count)
	case f.Fraction < 0 || f.Fraction > 1:
		return fmt.Errorf("fraction: must be within [0, 1], got %g", f.Fraction)
	case f.RetryAfter < 0 || f.AfterChunks < 0 || f.IntervalMS < 0:
		return errors.New("retry_after, after_chunks and interval_ms must not be negative")
	}
	return nil
}

// Injector holds the active faults. Faults are tried in the order added; the
// first that matches and fires is served.
type Injector struct {
	// kinds lists the kinds each endpoint supports; fixed at New.
	kinds map[string][]FaultKind

	active atomic.Int32 // len(faults), so requests skip the lock when idle
	mu     sync.Mutex
	faults []*Fault
	rng    *rand.Rand
	nextID int
}

func NewInjector(kinds map[string][]FaultKind, seed uint64) *Injector {
	if seed == 0 {
		seed = rand.Uint64()
	}
	return &Injector{kinds: kinds, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
}

func (in *Injector) supports(endpoint string, k FaultKind) bool {
	for _, have := range in.kinds[endpoint] {
		if have == k {
			return true
		}
	}
	return false
}

func (in *Injector) Add(f Fault) (Fault, error) {
	f, err := in.Prepare(f)
	if err != nil {
		return Fault{}, err
	}
	return in.Install(f), nil
}

// Prepare checks f against the known endpoints and kinds and fills in its
// defaults; it does not install it.
func (in *Injector) Prepare(f Fault) (Fault, error) {
	if err := f.Validate(); err != nil {
		return Fault{}, err
	}
	if f.Endpoint == "" {
		f.Endpoint = AnyEndpoint
	}
	if f.Endpoint == AnyEndpoint {
		ok := false
		for ep := range in.kinds {
			ok = ok || in.supports(ep, f.Kind)
		}
		if !ok {
			return Fault{}, fmt.Errorf("kind: unknown fault kind %q", f.Kind)
		}
	} else if _, ok := in.kinds[f.Endpoint]; !ok {
		return Fault{}, fmt.Errorf("endpoint: unknown endpoint %q", f.Endpoint)
	} else if !in.supports(f.Endpoint, f.Kind) {
		return Fault{}, fmt.Errorf("kind: %q is not supported on %s", f.Kind, f.Endpoint)
	}
	if f.Count == 0 && f.Fraction == 0 {
		f.Count = 1
	}
	if f.IntervalMS == 0 {
		f.IntervalMS = 1000
	}
	f.Served = 0
	return f, nil
}

func (in *Injector) Install(f Fault) Fault {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.nextID++
	f.ID = "fault_" + strconv.Itoa(in.nextID)
	in.faults = append(in.faults, &f)
	in.active.Store(int32(len(in.faults)))
	return f
}

func (in *Injector) Clear() {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.faults = nil
	in.active.Store(0)
}

func (in *Injector) List() []Fault {
	in.mu.Lock()
	defer in.mu.Unlock()
	out := make([]Fault, 0, len(in.faults))
	for _, f := range in.faults {
		out = append(out, *f)
	}
	return out
}

// Take returns the fault to serve for a request, or nil. Serving consumes
// one of the fault's Count; an exhausted fault is removed. With kinds, only
// faults of those kinds are considered: a call draws its HTTP faults when it
// is created and its no_response faults at each response.create.
func (in *Injector) Take(endpoint, model string, kinds ...FaultKind) *Fault {
	if in.active.Load() == 0 {
		return nil
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	for i, f := range in.faults {
		if (f.Endpoint != AnyEndpoint && f.Endpoint != endpoint) ||
			(f.Model != "" && f.Model != model) || !in.supports(endpoint, f.Kind) ||
			(len(kinds) > 0 && !slices.Contains(kinds, f.Kind)) {
			continue
		}
		if f.Fraction > 0 && in.rng.Float64() >= f.Fraction {
			continue
		}
		f.Served++
		served := *f
		if f.Count > 0 && f.Served >= f.Count {
			in.faults = append(in.faults[:i], in.faults[i+1:]...)
			in.active.Store(int32(len(in.faults)))
		}
		return &served
	}
	return nil
}
