package sse

import (
	"context"
	"errors"
	"sync"

	"github.com/voxgate/voxgate/llm"
)

// traces keeps every routed call's trace of one turn, in call order: a
// tool loop makes one routed call per iteration, and each may be answered
// by another target. The router hands a trace out on its EventDone or on
// its *llm.RouteError; traced takes it from whichever comes.
type traces struct {
	mu    sync.Mutex
	calls []llm.Trace
}

// all is a copy of the calls' traces.
func (t *traces) all() []llm.Trace {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]llm.Trace(nil), t.calls...)
}

func (t *traces) add(tr llm.Trace) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.calls = append(t.calls, tr)
}

// answered is the attempt that answered the turn's last answered call:
// the provider and model the turn's record names.
func (t *traces) answered() (llm.Attempt, bool) {
	calls := t.all()
	for i := len(calls) - 1; i >= 0; i-- {
		if a, ok := calls[i].Answered(); ok {
			return a, true
		}
	}
	return llm.Attempt{}, false
}

// traced is p, with each call's trace kept in ts.
type traced struct {
	p  llm.Provider
	ts *traces
}

func (r traced) Name() string { return r.p.Name() }

func (r traced) Stream(ctx context.Context, req llm.Request) (llm.Stream, error) {
	st, err := r.p.Stream(ctx, req)
	if err != nil {
		var re *llm.RouteError
		if errors.As(err, &re) {
			r.ts.add(re.Trace)
		}
		return nil, err
	}
	return &tracedStream{Stream: st, ts: r.ts}, nil
}

// tracedStream passes a committed call's events on, keeping its trace
// from the end that carries it (once: a RouteError repeats on every Next).
type tracedStream struct {
	llm.Stream
	ts   *traces
	once sync.Once
}

func (s *tracedStream) Next(ctx context.Context) (llm.Event, error) {
	ev, err := s.Stream.Next(ctx)
	var re *llm.RouteError
	switch {
	case err == nil && ev.Kind == llm.EventDone && ev.Trace != nil:
		s.once.Do(func() { s.ts.add(ev.Trace) })
	case errors.As(err, &re):
		s.once.Do(func() { s.ts.add(re.Trace) })
	}
	return ev, err
}

// degradedBy reports whether err is a route that failed before its first
// content for the targets' own reasons (DESIGN §11: every provider
// failed): the turn answers in degraded mode rather than with an error.
func degradedBy(err error) bool {
	var re *llm.RouteError
	return errors.As(err, &re) && !re.Committed && re.Outcome == llm.RouteDegraded
}
