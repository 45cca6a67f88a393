package llm

import (
	"context"
	"errors"
	"io"
	"sync"
	"time"
)

// Causes of the upstream context's end that are not the caller's.
var (
	errTimedOut = errors.New("no event within the timeout")
	errClosing  = errors.New("stream closed")
)

// decoder is one provider's reading of its stream; streamCore drives it and
// holds everything the adapters share (the queue of events, the sticky
// error, the timer, the contexts, Close). Its methods run under the core's
// lock, one at a time.
type decoder interface {
	// next waits for the provider's next chunk. It reports false at the end
	// of the body, with the failure that ended it: nil for a clean end, else
	// the transport's or the SDK's error, which classify maps.
	next() (bool, error)
	// take turns the chunk next read into events (emitter.emit). A refusal
	// or an answer that breaks the provider's protocol is an *Error, after
	// the events read before it.
	take() error
	// end is the body's clean end: the last event (EventDone), or the
	// *Error of an answer cut short.
	end() error
	// classify maps a failure next reported, once the core has ruled out
	// the ends of the contexts.
	classify(err error) *Error
	// reported is the usage the provider reported for the whole call
	// (named for the model that answered), nil until it has: a failure
	// after it (a cut before the end marker) is billed as reported.
	reported() *Usage
	// close releases the body.
	close()
}

// emitter is what a decoder writes to: the provider's name for its errors,
// and the events read and not yet returned by Next.
type emitter struct {
	provider string
	pending  []Event
}

func (e *emitter) emit(ev Event) { e.pending = append(e.pending, ev) }

func (e *emitter) invalid(err error) error {
	return &Error{Provider: e.provider, Code: ProviderInvalidResponse, Err: err}
}

// refused is the provider's safety decision, with the usage it reported for
// the stopped call (nil for none): such a call may be billed, never as a
// completion.
func (e *emitter) refused(err error, u *Usage) error {
	return &Error{Provider: e.provider, Code: ProviderContentFilter, Usage: u, Err: err}
}

// done ends a stream whose body ended cleanly: whole only with its finish
// reason and its usage (u, named for model); without either it was cut
// short, and there is no honest usage to bill.
func (e *emitter) done(finish string, u *Usage, model string) error {
	switch {
	case finish == "":
		return e.invalid(errors.New("the stream ended without a finish reason"))
	case u == nil:
		return e.invalid(errors.New("the stream ended without usage"))
	}
	e.emit(Event{Kind: EventDone, Usage: withModel(u, model), FinishReason: finish})
	return nil
}

// withModel is a copy of u naming the model that answered, nil for nil.
func withModel(u *Usage, model string) *Usage {
	if u == nil {
		return nil
	}
	cp := *u
	cp.Model = model
	return &cp
}

// streamCore is the Stream every adapter returns: a decoder read under one
// timer and two contexts.
type streamCore struct {
	emitter
	caller   context.Context // Stream's ctx: its end is the caller's own
	upstream context.Context // the HTTP request's
	cancel   context.CancelCauseFunc
	timeout  time.Duration
	// timer cancels upstream with errTimedOut; it runs only while we wait
	// on the provider, so a caller slow to ask for events is not taken for
	// a provider slow to send them.
	timer *time.Timer

	mu     sync.Mutex // one reader at a time; Close waits for it
	dec    decoder
	err    error // sticky: returned by every later Next
	eof    bool  // EventDone was returned
	closed bool
}

var _ Stream = (*streamCore)(nil)

// newStreamCore begins a call to model under ctx: the adapter sends its
// request under s.upstream, and the timer gives the provider the model's
// first-chunk timeout to send its first chunk (w.timeout after that, for
// each next one).
func newStreamCore(ctx context.Context, provider string, w waits, model string) *streamCore {
	upstream, cancel := context.WithCancelCause(ctx)
	s := &streamCore{emitter: emitter{provider: provider}, caller: ctx, upstream: upstream, cancel: cancel, timeout: w.timeout}
	s.timer = time.AfterFunc(w.FirstChunkTimeout(model), func() { cancel(errTimedOut) })
	return s
}

// start waits for the first chunk dec reads, so that every failure before
// the first event (a refusal, a timeout, a dropped connection, an
// unreadable first chunk) is returned here, where the router may still
// fail over.
func (s *streamCore) start(dec decoder) (Stream, error) {
	s.dec = dec
	if err := s.first(); err != nil {
		_ = s.Close()
		return nil, err
	}
	return s, nil
}

func (s *streamCore) first() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	ok, err := s.dec.next()
	s.timer.Stop()
	switch {
	case err != nil:
		return s.classify(err)
	case !ok:
		return s.invalid(errors.New("the stream ended before its first chunk"))
	}
	return s.dec.take()
}

// Next returns the next event. Ending ctx, before Next or while it waits,
// cancels the call and returns ctx's error, which sticks, so a caller that
// gives up never leaves a generation running upstream; so does ending the
// ctx Stream was given.
func (s *streamCore) Next(ctx context.Context) (Event, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for {
		switch {
		case s.closed:
			return Event{}, ErrClosed
		case len(s.pending) > 0:
			// Events read before a failure still go out first: the text a
			// content filter stopped was already generated.
			ev := s.pending[0]
			s.pending = s.pending[1:]
			s.eof = ev.Kind == EventDone
			return ev, nil
		case s.err != nil:
			return Event{}, s.err
		case s.eof:
			return Event{}, io.EOF
		}
		err := ctx.Err()
		if err == nil {
			err = s.read(ctx)
		}
		if err != nil {
			if e, ok := err.(*Error); ok {
				err = withReported(e, s.dec.reported())
			}
			s.err = err
			s.cancel(errClosing)
			if ctx.Err() != nil {
				return Event{}, err
			}
		}
	}
}

// read consumes one chunk (or the end of the body) into pending.
func (s *streamCore) read(ctx context.Context) error {
	stop := context.AfterFunc(ctx, func() { s.cancel(context.Cause(ctx)) })
	s.timer.Reset(s.timeout)
	ok, err := s.dec.next()
	s.timer.Stop()
	if !stop() {
		// ctx ended while we read, and cancelled the call.
		return ctx.Err()
	}
	switch {
	case err != nil:
		return s.classify(err)
	case ok:
		return s.dec.take()
	}
	if err := s.dec.end(); err != nil {
		return err
	}
	// The body was read to its end; release the request's context too.
	s.cancel(errClosing)
	return nil
}

// classify turns a failure of the call into what Stream and Next return:
// the caller's own context error when the caller ended it, ErrClosed after
// Close, a timeout when the timer fired, and otherwise the decoder's
// reading of it.
func (s *streamCore) classify(err error) error {
	if s.caller.Err() != nil {
		return s.caller.Err()
	}
	switch cause := context.Cause(s.upstream); {
	case errors.Is(cause, errTimedOut):
		return &Error{Provider: s.provider, Code: ProviderTimeout, Retryable: true, Err: cause}
	case errors.Is(cause, errClosing):
		return ErrClosed
	case errors.Is(cause, context.Canceled), errors.Is(cause, context.DeadlineExceeded):
		return cause // a context given to Next ended
	}
	return s.dec.classify(err)
}

// Reported is the usage the provider reported for the whole call, nil
// until it has (see withReported).
func (s *streamCore) Reported() *Usage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dec.reported()
}

// reporter is a stream that knows the usage its provider reported for the
// whole call (streamCore).
type reporter interface{ Reported() *Usage }

// withReported is e carrying u, the usage the provider reported for the
// whole call before the call failed (the usage chunk came, then the
// connection was cut or stalled before the end marker), when e carries
// none of its own. The provider bills that call as it reported it, so it
// is recorded as reported, never estimated. e itself is left as it is: it
// may be a stream's sticky error.
func withReported(e *Error, u *Usage) *Error {
	if e.Usage != nil || u == nil {
		return e
	}
	cp := *e
	cp.Usage = u
	return &cp
}

// Close cancels the call if it is still running and releases the
// connection. It returns once any Next in progress has returned.
func (s *streamCore) Close() error {
	s.cancel(errClosing)
	s.timer.Stop()
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.closed = true
		s.dec.close()
	}
	return nil
}
