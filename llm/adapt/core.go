package adapt

import (
	"context"
	"errors"
	"io"
	"sync"
	"time"

	"github.com/voxgate/voxgate/llm"
)

// Causes of the upstream context's end that are not the caller's.
var (
	errTimedOut = errors.New("no event within the timeout")
	errClosing  = llm.ErrClosing
)

// Decoder is one provider's reading of its stream; Core drives it and
// holds everything the adapters share (the queue of events, the sticky
// error, the timer, the contexts, Close). Its methods run under the core's
// lock, one at a time.
type Decoder interface {
	// next waits for the provider's next chunk. It reports false at the end
	// of the body, with the failure that ended it: nil for a clean end, else
	// the transport's or the SDK's error, which classify maps.
	Next() (bool, error)
	// take turns the chunk next read into events (Emitter.Emit). A refusal
	// or an answer that breaks the provider's protocol is an *llm.Error, after
	// the events read before it.
	Take() error
	// end is the body's clean end: the last event (llm.EventDone), or the
	// *llm.Error of an answer cut short.
	End() error
	// classify maps a failure next reported, once the core has ruled out
	// the ends of the contexts.
	Classify(err error) *llm.Error
	// reported is the usage the provider reported for the whole call
	// (named for the model that answered), nil until it has: a failure
	// after it (a cut before the end marker) is billed as reported.
	Reported() *llm.Usage
	// close releases the body.
	Close()
}

// Emitter is what a decoder writes to: the provider's name for its errors,
// and the events read and not yet returned by Next.
type Emitter struct {
	Provider string
	pending  []llm.Event
}

func (e *Emitter) Emit(ev llm.Event) { e.pending = append(e.pending, ev) }

// Emitted returns the events emitted and not yet returned, and forgets
// them: for a test that drives a decoder without a Core.
func (e *Emitter) Emitted() []llm.Event {
	out := e.pending
	e.pending = nil
	return out
}

func (e *Emitter) Invalid(err error) error {
	return &llm.Error{Provider: e.Provider, Code: llm.ProviderInvalidResponse, Err: err}
}

// refused is the provider's safety decision, with the usage it reported for
// the stopped call (nil for none): such a call may be billed, never as a
// completion.
func (e *Emitter) Refused(err error, u *llm.Usage) error {
	return &llm.Error{Provider: e.Provider, Code: llm.ProviderContentFilter, Usage: u, Err: err}
}

// done ends a stream whose body ended cleanly: whole only with its finish
// reason and its usage (u, named for model); without either it was cut
// short, and there is no honest usage to bill.
func (e *Emitter) Done(finish string, u *llm.Usage, model string) error {
	switch {
	case finish == "":
		return e.Invalid(errors.New("the stream ended without a finish reason"))
	case u == nil:
		return e.Invalid(errors.New("the stream ended without usage"))
	}
	e.Emit(llm.Event{Kind: llm.EventDone, Usage: WithModel(u, model), FinishReason: finish})
	return nil
}

// WithModel is a copy of u naming the model that answered, nil for nil.
func WithModel(u *llm.Usage, model string) *llm.Usage {
	if u == nil {
		return nil
	}
	cp := *u
	cp.Model = model
	return &cp
}

// Core is the llm.Stream every adapter returns: a decoder read under one
// timer and two contexts.
type Core struct {
	Emitter
	caller   context.Context // llm.Stream's ctx: its end is the caller's own
	upstream context.Context // the HTTP request's
	cancel   context.CancelCauseFunc
	timeout  time.Duration
	// timer cancels upstream with errTimedOut; it runs only while we wait
	// on the provider, so a caller slow to ask for events is not taken for
	// a provider slow to send them.
	timer *time.Timer

	mu     sync.Mutex // one reader at a time; Close waits for it
	dec    Decoder
	err    error // sticky: returned by every later Next
	eof    bool  // llm.EventDone was returned
	closed bool
}

var _ llm.Stream = (*Core)(nil)

// NewCore begins a call to model under ctx: the adapter sends its
// request under s.Upstream(), and the timer gives the provider the model's
// first-chunk timeout to send its first chunk (w.timeout after that, for
// each next one).
func NewCore(ctx context.Context, provider string, w Waits, model string) *Core {
	upstream, cancel := context.WithCancelCause(ctx)
	s := &Core{Emitter: Emitter{Provider: provider}, caller: ctx, upstream: upstream, cancel: cancel, timeout: w.timeout}
	s.timer = time.AfterFunc(w.FirstChunkTimeout(model), func() { cancel(errTimedOut) })
	return s
}

// Upstream is the context the adapter sends its request under: the
// caller's, ended also by the timer and by Close.
func (s *Core) Upstream() context.Context { return s.upstream }

// Start waits for the first chunk dec reads, so that every failure before
// the first event (a refusal, a timeout, a dropped connection, an
// unreadable first chunk) is returned here, where the router may still
// fail over.
func (s *Core) Start(dec Decoder) (llm.Stream, error) {
	s.dec = dec
	if err := s.first(); err != nil {
		_ = s.Close()
		return nil, err
	}
	return s, nil
}

func (s *Core) first() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	ok, err := s.dec.Next()
	s.timer.Stop()
	switch {
	case err != nil:
		return s.classify(err)
	case !ok:
		return s.Invalid(errors.New("the stream ended before its first chunk"))
	}
	return s.dec.Take()
}

// Next returns the next event. Ending ctx, before Next or while it waits,
// cancels the call and returns ctx's error, which sticks, so a caller that
// gives up never leaves a generation running upstream; so does ending the
// ctx llm.Stream was given.
func (s *Core) Next(ctx context.Context) (llm.Event, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for {
		switch {
		case s.closed:
			return llm.Event{}, llm.ErrClosed
		case len(s.pending) > 0:
			// Events read before a failure still go out first: the text a
			// content filter stopped was already generated.
			ev := s.pending[0]
			s.pending = s.pending[1:]
			s.eof = ev.Kind == llm.EventDone
			return ev, nil
		case s.err != nil:
			return llm.Event{}, s.err
		case s.eof:
			return llm.Event{}, io.EOF
		}
		err := ctx.Err()
		if err == nil {
			err = s.read(ctx)
		}
		if err != nil {
			if e, ok := err.(*llm.Error); ok {
				err = llm.WithReported(e, s.dec.Reported())
			}
			s.err = err
			s.cancel(errClosing)
			if ctx.Err() != nil {
				return llm.Event{}, err
			}
		}
	}
}

// read consumes one chunk (or the end of the body) into pending.
func (s *Core) read(ctx context.Context) error {
	stop := context.AfterFunc(ctx, func() { s.cancel(context.Cause(ctx)) })
	s.timer.Reset(s.timeout)
	ok, err := s.dec.Next()
	s.timer.Stop()
	if !stop() {
		// ctx ended while we read, and cancelled the call.
		return ctx.Err()
	}
	switch {
	case err != nil:
		return s.classify(err)
	case ok:
		return s.dec.Take()
	}
	if err := s.dec.End(); err != nil {
		return err
	}
	// The body was read to its end; release the request's context too.
	s.cancel(errClosing)
	return nil
}

// classify turns a failure of the call into what llm.Stream and Next return:
// the caller's own context error when the caller ended it, llm.ErrClosed after
// Close, a timeout when the timer fired, and otherwise the decoder's
// reading of it.
func (s *Core) classify(err error) error {
	if s.caller.Err() != nil {
		return s.caller.Err()
	}
	switch cause := context.Cause(s.upstream); {
	case errors.Is(cause, errTimedOut):
		return &llm.Error{Provider: s.Provider, Code: llm.ProviderTimeout, Retryable: true, Err: cause}
	case errors.Is(cause, errClosing):
		return llm.ErrClosed
	case errors.Is(cause, context.Canceled), errors.Is(cause, context.DeadlineExceeded):
		return cause // a context given to Next ended
	}
	return s.dec.Classify(err)
}

// Reported is the usage the provider reported for the whole call, nil
// until it has (see llm.WithReported).
func (s *Core) Reported() *llm.Usage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dec.Reported()
}

// Close cancels the call if it is still running and releases the
// connection. It returns once any Next in progress has returned.
func (s *Core) Close() error {
	s.cancel(errClosing)
	s.timer.Stop()
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.closed = true
		s.dec.Close()
	}
	return nil
}
