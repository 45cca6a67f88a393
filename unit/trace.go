package unit

import (
	"context"
	"errors"
	"sync"

	"github.com/voxgate/voxgate/llm"
)

// Traces keeps every routed call's trace of one unit, in call order: a
// tool loop makes one routed call per iteration, and each may be answered
// by another target. The router hands a trace out on its EventDone or on
// its *llm.RouteError; Keep takes it from whichever comes.
type Traces struct {
	mu    sync.Mutex
	calls []llm.Trace
	// inputs are the calls' prompts in estimated tokens, in the same
	// order: what an attempt cut before its provider reported cost.
	inputs []int64
}

// All is a copy of the calls' traces.
func (t *Traces) All() []llm.Trace {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]llm.Trace(nil), t.calls...)
}

// Inputs are the calls' prompts in estimated tokens (llm.EstimateInput),
// in All's order.
func (t *Traces) Inputs() []int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]int64(nil), t.inputs...)
}

func (t *Traces) add(tr llm.Trace, in int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.calls, t.inputs = append(t.calls, tr), append(t.inputs, in)
}

// Answered is the attempt that answered the unit's last answered call:
// the provider and model the unit's record names.
func (t *Traces) Answered() (llm.Attempt, bool) {
	calls := t.All()
	for i := len(calls) - 1; i >= 0; i-- {
		if a, ok := calls[i].Answered(); ok {
			return a, true
		}
	}
	return llm.Attempt{}, false
}

// Keep is p, with each call's trace kept in t.
func (t *Traces) Keep(p llm.Provider) llm.Provider { return traced{p: p, ts: t} }

// traced is p, with each call's trace kept in ts.
type traced struct {
	p  llm.Provider
	ts *Traces
}

func (r traced) Name() string { return r.p.Name() }

func (r traced) Stream(ctx context.Context, req llm.Request) (llm.Stream, error) {
	st, err := r.p.Stream(ctx, req)
	if err != nil {
		var re *llm.RouteError
		if errors.As(err, &re) {
			r.ts.add(re.Trace, llm.EstimateInput(req))
		}
		return nil, err
	}
	return &tracedStream{Stream: st, ts: r.ts, in: llm.EstimateInput(req)}, nil
}

// tracedStream passes a committed call's events on, keeping its trace
// from the end that carries it (once: a RouteError repeats on every Next).
type tracedStream struct {
	llm.Stream
	ts   *Traces
	in   int64 // the call's prompt, estimated
	once sync.Once
}

func (s *tracedStream) Next(ctx context.Context) (llm.Event, error) {
	ev, err := s.Stream.Next(ctx)
	var re *llm.RouteError
	switch {
	case err == nil && ev.Kind == llm.EventDone && ev.Trace != nil:
		s.once.Do(func() { s.ts.add(ev.Trace, s.in) })
	case errors.As(err, &re):
		s.once.Do(func() { s.ts.add(re.Trace, s.in) })
	}
	return ev, err
}

// DegradedBy reports whether err is a route that failed before its first
// content for the targets' own reasons (DESIGN §11: every provider
// failed): the turn answers in degraded mode rather than with an error.
func DegradedBy(err error) bool {
	var re *llm.RouteError
	return errors.As(err, &re) && !re.Committed && re.Outcome == llm.RouteDegraded
}
