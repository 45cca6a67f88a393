package llm

import (
	"errors"
	"fmt"
	"time"
)

// Outcomes of an attempt that are not a provider's failure code.
const (
	OutcomeSuccess         = "success"
	OutcomeCircuitOpen     = "circuit_open"
	OutcomeBudgetExhausted = "budget_exhausted"
	OutcomeNotConfigured   = "not_configured"
	// OutcomeUnsupported: the target's provider cannot honour the request
	// (Limited), so it was passed over.
	OutcomeUnsupported = "unsupported"
)

// Attempt is one try of one target (DESIGN §11, failover_trace). It holds
// no provider text: only codes, a status and times, so it can be stored
// with the turn and shown to operators.
type Attempt struct {
	Provider string // the configured provider's name
	Model    string
	// Outcome is OutcomeSuccess, a Code (PROVIDER_TIMEOUT, …), or one of
	// the router's own outcomes.
	Outcome string
	Status  int // the provider's HTTP status, 0 when there was none
	// Duration runs from the attempt's start to its end (for the attempt
	// that answered, to its commit or its failure after commit).
	Duration time.Duration
	// FirstContent is the time to the first text or tool-call delta, 0
	// when none came.
	FirstContent time.Duration
	// Answered says this attempt committed: its content reached the
	// caller, and it is the model that answered (or failed after commit).
	// When a continuation took over an answer cut on it, the continuation
	// is the one that answered.
	Answered bool
	// CutAt is, for an attempt cut after commit, the bytes of the answer's
	// text the caller had when it was cut: where a continuation took over.
	CutAt int
	// Continues says this attempt continued an answer cut on an earlier one
	// (the one with CutAt before it): its text follows that one's.
	Continues bool
	// Usage is what the provider reported for an attempt that failed (it
	// may bill it); nil when it reported none. The answering attempt's
	// usage is on EventDone, never here: a failed attempt is never a
	// completion.
	Usage *Usage
}

// String is the trace entry: "<provider>/<model>:<outcome>".
func (a Attempt) String() string { return a.Provider + "/" + a.Model + ":" + a.Outcome }

// CutOutput is, for an attempt cut after commit that a continuation took
// over, the tokens of the answer the caller had from it, estimated
// (EstimateOutput): its provider reported nothing and billed what it
// wrote. 0 for any other attempt.
func (a Attempt) CutOutput() int64 {
	if a.CutAt == 0 || a.Answered {
		return 0
	}
	return EstimateOutput(a.CutAt)
}

// Trace is a routed call's attempts in order.
type Trace []Attempt

// CutOutput is the tokens of the answer the caller read from attempts cut
// short and continued: with the answering attempt's output, the whole
// answer's.
func (t Trace) CutOutput() int64 {
	var n int64
	for _, a := range t {
		n += a.CutOutput()
	}
	return n
}

// Strings is the trace as failover_trace entries.
func (t Trace) Strings() []string {
	out := make([]string, len(t))
	for i, a := range t {
		out[i] = a.String()
	}
	return out
}

// Answered is the attempt that committed, if any.
func (t Trace) Answered() (Attempt, bool) {
	for _, a := range t {
		if a.Answered {
			return a, true
		}
	}
	return Attempt{}, false
}

// RouteOutcome is what a failed route means for the caller (DESIGN §11's
// outcome table).
type RouteOutcome int

const (
	// RouteDegraded: every target failed for reasons of their own; the
	// caller answers in degraded mode.
	RouteDegraded RouteOutcome = iota + 1
	// RouteAuth: every attempt was refused for its key or account: 502
	// AI_CONFIG_ERROR.
	RouteAuth
	// RouteRateLimited: every attempt was rate-limited: 429
	// AI_RATE_LIMITED, with Err's RetryAfter.
	RouteRateLimited
	// RouteContentFiltered: a provider refused on safety grounds; the
	// refusal is propagated, never failed over: 422 AI_CONTENT_FILTERED.
	RouteContentFiltered
	// RouteRefused: the request itself was refused (a 400, a context too
	// long for every target that could take it): Err's own class.
	RouteRefused
	// RouteCut: the answer failed after its first content. Nothing more
	// comes from any target: one error event ends the turn.
	RouteCut
)

// ErrUnknownRoute is a Request.Model that names no route.
var ErrUnknownRoute = errors.New("llm: no such route")

// ErrNoTarget is a route that ended with no target tried: every one was
// unconfigured, open, or out of budget.
var ErrNoTarget = errors.New("llm: no target could be tried")

// RouteError is a routed call's failure: the trace so far and what the
// failure means for the caller. Err is the last provider failure (an
// *Error), or ErrUnknownRoute or ErrNoTarget; errors.As reaches it.
type RouteError struct {
	Route     string
	Outcome   RouteOutcome
	Committed bool // the failure came after the first content
	Trace     Trace
	Err       error
}

func (e *RouteError) Error() string {
	return fmt.Sprintf("llm: route %q: %v (trace %v)", e.Route, e.Err, e.Trace.Strings())
}

func (e *RouteError) Unwrap() error { return e.Err }

// outcomeOf classifies a route that ended without an answer, from the
// attempts that reached a provider and the failure that ended it.
func outcomeOf(trace Trace, last error) RouteOutcome {
	var e *Error
	if errors.As(last, &e) {
		switch {
		case e.Code == ProviderContentFilter:
			return RouteContentFiltered
		case refusesRequest(e):
			return RouteRefused
		}
	}
	auth, limited, tried := true, true, 0
	for _, a := range trace {
		switch a.Outcome {
		case OutcomeCircuitOpen, OutcomeNotConfigured, OutcomeBudgetExhausted, OutcomeUnsupported:
			continue
		}
		tried++
		auth = auth && a.Outcome == string(ProviderAuth)
		limited = limited && a.Outcome == string(ProviderRateLimit)
	}
	switch {
	case tried > 0 && auth:
		return RouteAuth
	case tried > 0 && limited:
		return RouteRateLimited
	}
	return RouteDegraded
}

// refusesRequest is a failure another target would give too, because the
// request is at fault: a 400, or a context too long.
func refusesRequest(e *Error) bool {
	return e.Code == ProviderContextLength || (e.Status == 400 && e.Code != ProviderContentFilter)
}
