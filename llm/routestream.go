package llm

import (
	"context"
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/trace"
)

// watchdog ends an attempt at a deadline, with the deadline's cause. It
// runs only while the router waits on the provider: a caller slow to ask
// for the next event is not taken for a provider slow to send it.
type watchdog struct {
	cancel context.CancelCauseFunc
	mu     sync.Mutex
	timer  *time.Timer
}

func newWatchdog(cancel context.CancelCauseFunc) *watchdog { return &watchdog{cancel: cancel} }

func (w *watchdog) arm(d deadline) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.timer != nil {
		w.timer.Stop()
	}
	cause := d.cause
	w.timer = time.AfterFunc(time.Until(d.at), func() { w.cancel(cause) })
}

func (w *watchdog) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.timer != nil {
		w.timer.Stop()
	}
}

// routedStream is the committed target's stream: the events read before
// commit first, then the rest as they come. A failure after commit ends
// it: no other target continues an answer already begun.
type routedStream struct {
	c      *call
	t      Target
	b      *breaker
	probe  bool
	index  int // the answering attempt in the trace
	st     Stream
	parent context.Context // the caller's, given to Router.Stream
	ctx    context.Context // the attempt's; its cause says why it ended
	start  time.Time
	cancel context.CancelCauseFunc
	dog    *watchdog

	mu      sync.Mutex // one Next at a time
	pending []Event
	err     error // sticky: the failure after commit
	eof     bool

	closed atomic.Bool
	ended  sync.Once // the breaker's verdict and the attempt's count, once
	span   trace.Span
}

// Next returns the next event. Its EventDone carries the trace; a failure
// is a *RouteError with Committed set, returned again by every later Next.
func (s *routedStream) Next(ctx context.Context) (Event, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closed.Load():
		return Event{}, ErrClosed
	case s.err != nil:
		return Event{}, s.err
	case s.eof:
		return Event{}, io.EOF
	}
	if len(s.pending) > 0 {
		ev := s.pending[0]
		s.pending = s.pending[1:]
		return s.deliver(ev), nil
	}
	s.dog.arm(deadline{time.Now().Add(s.t.Timeout), errChunkTimeout})
	ev, err := s.st.Next(ctx)
	s.dog.stop()
	if err == nil {
		return s.deliver(ev), nil
	}
	switch {
	case s.closed.Load():
		return Event{}, ErrClosed
	case ctx.Err() != nil || s.parent.Err() != nil:
		// The caller's own end is not the target's failure.
		return Event{}, err
	case errors.Is(err, io.EOF):
		err = &Error{Provider: s.t.Provider, Code: ProviderInvalidResponse, Err: errors.New("the stream ended without its end")}
	}
	e := asProviderError(s.t.Provider, timedOut(s.ctx, s.t.Provider, err))
	if r, ok := s.st.(reporter); ok {
		// The router's own deadline ended the call: the adapter saw only
		// its context end, and the usage it had read is the call's.
		e = WithReported(e, r.Reported())
	}
	s.end(func() {
		s.b.failure(s.c.r.now())
		s.c.settle(s.index, string(e.Code), e.Status, time.Since(s.start), e.Usage)
		endAttempt(s.span, string(e.Code), e.Status, e.Usage, "", s.b)
	})
	outcome := RouteCut
	if e.Code == ProviderContentFilter {
		outcome = RouteContentFiltered
	}
	s.err = &RouteError{Route: s.c.route.Name, Outcome: outcome, Committed: true, Trace: s.c.snapshot(), Err: e}
	s.cancel(ErrClosing)
	return Event{}, s.err
}

// deliver passes ev on; EventDone settles the attempt as a success and
// carries the trace.
func (s *routedStream) deliver(ev Event) Event {
	if ev.Kind != EventDone {
		return ev
	}
	s.eof = true
	s.end(func() {
		s.b.success()
		s.c.settle(s.index, OutcomeSuccess, 0, time.Since(s.start), nil)
		endAttempt(s.span, OutcomeSuccess, 0, ev.Usage, ev.FinishReason, s.b)
	})
	ev.Trace = s.c.snapshot()
	return ev
}

// end runs the attempt's settlement once.
func (s *routedStream) end(fn func()) { s.ended.Do(fn) }

// Close cancels the call if it is still running. A stream closed before
// its end gives the breaker no verdict and counts as answered.
func (s *routedStream) Close() error {
	s.closed.Store(true)
	s.cancel(ErrClosing)
	s.dog.stop()
	err := s.st.Close()
	s.end(func() {
		s.b.release(s.probe)
		s.c.settle(s.index, OutcomeSuccess, 0, time.Since(s.start), nil)
		endAttempt(s.span, OutcomeSuccess, 0, nil, "", s.b)
	})
	return err
}

// Answering is the target that committed: the model whose answer this is,
// known before the first event is read, so that an OpenAI-shaped stream can
// name it in every chunk.
func (s *routedStream) Answering() Target { return s.t }
