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

// leg is one committed attempt: the target whose events are being
// delivered, until it ends or a continuation takes over from it.
type leg struct {
	t      Target
	b      *breaker
	probe  bool
	index  int // its attempt in the trace
	st     Stream
	ctx    context.Context // the attempt's; its cause says why it ended
	start  time.Time
	cancel context.CancelCauseFunc
	dog    *watchdog
	span   trace.Span
	ended  sync.Once // the breaker's verdict and the attempt's count, once
}

// end runs the leg's settlement once.
func (l *leg) end(fn func()) { l.ended.Do(fn) }

// routedStream is the routed answer: the committed leg's events (those
// read before commit first, then the rest as they come) and, when a leg is
// cut after commit, a continuation's on a target that declares it can
// continue (routecontinue.go), so the caller reads one answer.
type routedStream struct {
	c      *call
	parent context.Context // the caller's, given to Router.Stream
	// life ends at Close: a continuation's attempt runs under it.
	life  context.Context
	stop  context.CancelFunc
	first Target // the target that committed first (Answering)

	mu      sync.Mutex // one Next at a time
	pending []Event
	err     error // sticky: the failure that ended the answer
	eof     bool
	so      soFar // what the caller has been given
	// continued are the targets that have continued the answer, or tried
	// to, by Target.String: each does once.
	continued map[string]bool

	legMu  sync.Mutex // cur is swapped by a continuation beside a Close
	cur    *leg
	closed atomic.Bool
}

func newRoutedStream(ctx context.Context, c *call, l *leg, buf []Event) *routedStream {
	life, stop := context.WithCancel(ctx)
	return &routedStream{c: c, parent: ctx, life: life, stop: stop, first: l.t, cur: l, pending: buf,
		so: newSoFar(), continued: map[string]bool{}}
}

func (s *routedStream) leg() *leg {
	s.legMu.Lock()
	defer s.legMu.Unlock()
	return s.cur
}

// Next returns the next event. Its EventDone carries the trace; a failure
// is a *RouteError with Committed set, returned again by every later Next.
func (s *routedStream) Next(ctx context.Context) (Event, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for {
		switch {
		case s.closed.Load():
			return Event{}, ErrClosed
		case s.err != nil:
			return Event{}, s.err
		case s.eof:
			return Event{}, io.EOF
		}
		l := s.leg()
		var ev Event
		var err error
		if len(s.pending) > 0 {
			ev = s.pending[0]
			s.pending = s.pending[1:]
		} else {
			l.dog.arm(deadline{time.Now().Add(l.t.Timeout), errChunkTimeout})
			ev, err = l.st.Next(ctx)
			l.dog.stop()
		}
		if err == nil && ev.Kind == EventSkipped {
			s.c.r.metrics.skippedChunk(l.t)
			skippedChunk(l.span)
			continue
		}
		if err == nil {
			out, ok, diverged := s.so.pass(ev)
			if diverged != nil {
				err = &Error{Provider: l.t.Provider, Code: ProviderInvalidResponse, Err: diverged}
			} else if ok {
				return s.deliver(l, out), nil
			} else {
				continue
			}
		}
		switch {
		case s.closed.Load():
			return Event{}, ErrClosed
		case ctx.Err() != nil || s.parent.Err() != nil:
			// The caller's own end is not the target's failure.
			return Event{}, err
		}
		if err := s.failed(ctx, l, err); err != nil {
			return Event{}, err
		}
	}
}

// failed ends the leg l, cut after commit by err, and either continues the
// answer on another leg (nil) or ends it with the sticky *RouteError that
// names the cut.
func (s *routedStream) failed(ctx context.Context, l *leg, err error) error {
	if errors.Is(err, io.EOF) {
		err = &Error{Provider: l.t.Provider, Code: ProviderInvalidResponse, Err: errors.New("the stream ended without its end")}
	}
	e := asProviderError(l.t.Provider, timedOut(l.ctx, l.t.Provider, err))
	if r, ok := l.st.(reporter); ok {
		// The router's own deadline ended the call: the adapter saw only
		// its context end, and the usage it had read is the call's.
		e = WithReported(e, r.Reported())
	}
	l.end(func() {
		l.b.failure(s.c.r.now())
		s.c.settle(l.index, string(e.Code), e.Status, time.Since(l.start), e.Usage)
		s.c.cutAt(l.index, s.so.text.Len())
		endAttempt(l.span, string(e.Code), e.Status, e.Usage, "", l.b)
	})
	l.cancel(ErrClosing)
	_ = l.st.Close()
	if e.Code != ProviderContentFilter {
		next, buf, err := s.continueAfter(ctx, l)
		switch {
		case err != nil: // the caller left, or closed the stream
			s.err = err
			if s.closed.Load() {
				return ErrClosed
			}
			return err
		case next != nil:
			s.legMu.Lock()
			closed := s.closed.Load()
			if !closed {
				s.cur = next
			}
			s.legMu.Unlock()
			if closed { // Close came as the continuation committed
				_ = s.closeLeg(next)
				return ErrClosed
			}
			s.pending = buf
			return nil
		}
	}
	outcome := RouteCut
	if e.Code == ProviderContentFilter {
		outcome = RouteContentFiltered
	}
	s.err = &RouteError{Route: s.c.route.Name, Outcome: outcome, Committed: true, Trace: s.c.snapshot(), Err: e}
	s.stop()
	return s.err
}

// deliver passes ev on; EventDone settles the leg as a success and
// carries the trace.
func (s *routedStream) deliver(l *leg, ev Event) Event {
	if ev.Kind != EventDone {
		return ev
	}
	s.eof = true
	defer s.stop()
	l.end(func() {
		l.b.success()
		s.c.settle(l.index, OutcomeSuccess, 0, time.Since(l.start), nil)
		endAttempt(l.span, OutcomeSuccess, 0, ev.Usage, ev.FinishReason, l.b)
		s.c.r.metrics.answered(l.t, ev.Usage)
	})
	ev.Trace = s.c.snapshot()
	return ev
}

// Close cancels the call if it is still running, a continuation's start
// included. A stream closed before its end gives the breaker no verdict
// and counts as answered.
func (s *routedStream) Close() error {
	s.legMu.Lock()
	s.closed.Store(true)
	l := s.cur
	s.legMu.Unlock()
	s.stop()
	return s.closeLeg(l)
}

// closeLeg cancels l and settles it as closed by the caller.
func (s *routedStream) closeLeg(l *leg) error {
	l.cancel(ErrClosing)
	l.dog.stop()
	err := l.st.Close()
	l.end(func() {
		l.b.release(l.probe)
		s.c.settle(l.index, OutcomeSuccess, 0, time.Since(l.start), nil)
		endAttempt(l.span, OutcomeSuccess, 0, nil, "", l.b)
	})
	return err
}

// Answering is the target that committed first: the model whose answer
// this is, known before the first event is read, so that an OpenAI-shaped
// stream can name it in every chunk. A continuation on another target
// does not change it; the trace names the attempt that finished.
func (s *routedStream) Answering() Target { return s.first }
