package llm

import (
	"context"
	"errors"
	"sync"
	"time"
)

// Causes of an attempt's end that the router itself decided.
var (
	errNoContent    = errors.New("no content within the target's first-content deadline")
	errStalled      = errors.New("no chunk within the target's stall deadline")
	errNoAnswer     = errors.New("no answer within the target's whole-answer deadline")
	errBudget       = errors.New("the route's budget ran out")
	errChunkTimeout = errors.New("no chunk within the target's timeout")
	// errCircuitOpen is a target passed over for its open breaker; it is
	// never a route's failure.
	errCircuitOpen = errors.New("the target's circuit breaker is open")
)

// call is one routed call's walk through its route's targets.
type call struct {
	r        *Router
	route    Route
	req      Request
	deadline time.Time // the budget's end

	mu    sync.Mutex // the trace is read by a stream's Close beside Next
	trace Trace
}

// verdict is what a failed attempt leads to.
type verdict int

const (
	retrySame verdict = iota + 1 // one more try of the same target
	failOver                     // the next target
	stopRoute                    // no other target: the failure is the answer
)

// judge applies DESIGN §11's retry rules to a provider's failure.
func judge(e *Error) verdict {
	switch {
	case e.Code == ProviderContentFilter, refusesRequest(e):
		return stopRoute
	case e.Code == ProviderRateLimit, e.Code == ProviderUnavailable, e.Code == ProviderNetwork:
		return retrySame
	}
	// A timeout (no response, no content, a stall) is not retried:
	// retrying a silent upstream only doubles the wait.
	return failOver
}

func (c *call) run(ctx context.Context) (Stream, error) {
	var last error
	// After a context-length refusal, only a target declaring a larger
	// window may take the request.
	window, tooLong := 0, false
	// moved: the last target failed or was open, so trying the next one
	// is a failover (an unconfigured target is configuration, not one).
	moved := false
	for _, t := range c.route.Targets {
		if tooLong && t.ContextWindow <= window {
			continue
		}
		if unhonoured(c.r.providers[t.Provider], c.req) != "" {
			c.record(Attempt{Provider: t.Provider, Model: t.Model, Outcome: OutcomeUnsupported})
			continue
		}
		if moved {
			c.r.metrics.failover(c.route.Name)
		}
		l, buf, err, stop := c.target(ctx, t)
		if l != nil {
			return newRoutedStream(ctx, c, l, buf), nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		moved = err != nil
		if err != nil && !errors.Is(err, errCircuitOpen) {
			last = err
		}
		var e *Error
		if errors.As(err, &e) && e.Code == ProviderContextLength {
			window, tooLong, stop = t.ContextWindow, true, false
		}
		if stop {
			break
		}
	}
	if last == nil {
		last = ErrNoTarget
	}
	trace := c.snapshot()
	return nil, &RouteError{Route: c.route.Name, Outcome: outcomeOf(trace, last), Trace: trace, Err: last}
}

// target tries t once, and once more when the failure and the budget
// allow. stop says the route ends here.
func (c *call) target(ctx context.Context, t Target) (l *leg, buf []Event, err error, stop bool) {
	p := c.r.providers[t.Provider]
	b := c.r.breakers[t.String()]
	var last *Error
	for try := 0; ; try++ {
		if time.Until(c.deadline) <= 0 {
			c.record(Attempt{Provider: t.Provider, Model: t.Model, Outcome: OutcomeBudgetExhausted})
			return nil, nil, &Error{Provider: t.Provider, Code: ProviderTimeout, Err: errBudget}, true
		}
		if p == nil {
			c.record(Attempt{Provider: t.Provider, Model: t.Model, Outcome: OutcomeNotConfigured})
			return nil, nil, nil, false
		}
		ok, probe := b.allow(c.r.now())
		if !ok {
			c.record(Attempt{Provider: t.Provider, Model: t.Model, Outcome: OutcomeCircuitOpen})
			if try > 0 {
				// Opened by this call's own first try: its failure stands.
				return nil, nil, last, false
			}
			return nil, nil, errCircuitOpen, false
		}
		l, buf, err := c.attempt(ctx, t, p, b, probe, c.req)
		if err == nil || ctx.Err() != nil {
			return l, buf, err, true
		}
		e := asProviderError(t.Provider, err)
		last = e
		switch judge(e) {
		case stopRoute:
			return nil, nil, e, true
		case failOver:
			return nil, nil, e, false
		}
		if try > 0 {
			return nil, nil, e, false
		}
		wait := c.r.retryDelay
		if e.RetryAfter > 0 {
			wait = time.Duration(e.RetryAfter) * time.Second
		}
		// A wait that does not fit the budget fails over at once: another
		// target may answer now.
		if wait >= time.Until(c.deadline) {
			return nil, nil, e, false
		}
		if err := sleep(ctx, wait); err != nil {
			return nil, nil, err, true
		}
	}
}

// attempt makes one call to t with req (the route's request, or a
// continuation of it) and reads it up to its first content: the committed
// leg and the events read so far.
func (c *call) attempt(ctx context.Context, t Target, p Provider, b *breaker, probe bool, req Request) (*leg, []Event, error) {
	start := time.Now()
	sctx, span := startAttempt(ctx, c.route.Name, t, p)
	actx, cancel := context.WithCancelCause(sctx)
	dog := newWatchdog(cancel)
	contentBy := c.firstBy(start, t)
	dog.arm(contentBy)
	req.Model, req.PromptCacheTTL, req.ServiceTier = t.Model, t.PromptCacheTTL, t.ServiceTier
	if t.MaxTokens > 0 && (req.MaxOutputTokens == 0 || req.MaxOutputTokens > t.MaxTokens) {
		req.MaxOutputTokens = t.MaxTokens
	}
	fail := func(st Stream, err error) (*leg, []Event, error) {
		dog.stop()
		if st != nil {
			_ = st.Close()
		}
		cancel(ErrClosing)
		if ctx.Err() != nil {
			b.release(probe)
			endAttempt(span, spanCancelled, 0, nil, "", b)
			return nil, nil, ctx.Err()
		}
		e := asProviderError(t.Provider, timedOut(actx, t.Provider, err))
		c.failed(t, b, probe, e, time.Since(start))
		endAttempt(span, string(e.Code), e.Status, e.Usage, "", b)
		return nil, nil, e
	}
	st, err := p.Stream(actx, req)
	if err != nil {
		return fail(nil, err)
	}
	var buf []Event
	for {
		// The provider has answered (Stream returns at its first chunk)
		// but sent no content yet: the next frame must come within the
		// stall deadline, and the content within its own.
		dog.arm(earlier(c.until(time.Now().Add(t.Stall), errStalled), contentBy))
		ev, err := st.Next(actx)
		if err != nil {
			return fail(st, err)
		}
		buf = append(buf, ev)
		if commits(ev) {
			break
		}
	}
	dog.stop()
	first := time.Since(start)
	c.r.metrics.firstContent(t, first)
	i := c.record(Attempt{Provider: t.Provider, Model: t.Model, Outcome: OutcomeSuccess,
		Duration: first, FirstContent: first, Answered: true})
	return &leg{t: t, b: b, probe: probe, index: i, st: st, ctx: actx, start: start, cancel: cancel,
		dog: dog, span: span}, buf, nil
}

// firstBy is when an attempt begun at start must commit: by its first
// content, or for a whole call (Request.Whole) by its whole answer, which
// comes as one response. The budget bounds when a whole call may begin,
// not how long its answer takes to write (docs/llm.md).
func (c *call) firstBy(start time.Time, t Target) deadline {
	if c.req.Whole {
		return deadline{start.Add(t.FirstContent + c.r.answerTime), errNoAnswer}
	}
	return c.until(start.Add(t.FirstContent), errNoContent)
}

// deadline is when the watchdog fires and why.
type deadline struct {
	at    time.Time
	cause error
}

// until is the earlier of at and the budget's end, with its cause.
func (c *call) until(at time.Time, cause error) deadline {
	if c.deadline.Before(at) {
		return deadline{c.deadline, errBudget}
	}
	return deadline{at, cause}
}

func earlier(a, b deadline) deadline {
	if b.at.Before(a.at) {
		return b
	}
	return a
}

// commits reports an event that commits the call to its target: content,
// or an answer that ended without any.
func commits(ev Event) bool {
	switch ev.Kind {
	case EventText:
		return ev.Text != ""
	case EventToolCallDelta, EventToolCall, EventDone:
		return true
	}
	return false
}

// failed records a failed attempt in the trace, the breaker and the
// metrics. A failure of the request itself says nothing of the target's
// health, so the breaker only hands its probe back.
func (c *call) failed(t Target, b *breaker, probe bool, e *Error, d time.Duration) {
	if e.Code == ProviderContentFilter || refusesRequest(e) {
		b.release(probe)
	} else {
		b.failure(c.r.now())
	}
	c.record(Attempt{Provider: t.Provider, Model: t.Model, Outcome: string(e.Code), Status: e.Status,
		Duration: d, Usage: e.Usage})
}

// record appends a to the trace and counts it; the answering attempt is
// counted when it ends (routedStream.end). It returns a's index.
func (c *call) record(a Attempt) int {
	if !a.Answered {
		c.r.metrics.attempt(a.Provider, a.Model, a.Outcome)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.trace = append(c.trace, a)
	return len(c.trace) - 1
}

// settle rewrites the answering attempt once its stream has ended; u is
// the usage a failed stream reported.
func (c *call) settle(i int, outcome string, status int, d time.Duration, u *Usage) {
	c.mu.Lock()
	a := &c.trace[i]
	a.Outcome, a.Status, a.Duration, a.Usage = outcome, status, d, u
	provider, model := a.Provider, a.Model
	c.mu.Unlock()
	c.r.metrics.attempt(provider, model, outcome)
}

// cutAt notes where attempt i, cut after commit, left the answer: the
// bytes of text the caller had.
func (c *call) cutAt(i, n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.trace[i].CutAt = n
}

// handOver makes attempt to, which continues the answer cut on attempt
// from, the one that answered: its usage is on EventDone, while from's
// (when its provider reported any) is a failed attempt's.
func (c *call) handOver(from, to int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.trace[from].Answered = false
	c.trace[to].Continues = true
}

func (c *call) snapshot() Trace {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append(Trace(nil), c.trace...)
}

// timedOut turns an attempt ended by its watchdog into the timeout it is;
// other failures pass as they are.
func timedOut(actx context.Context, provider string, err error) error {
	switch cause := context.Cause(actx); {
	case errors.Is(cause, errNoContent), errors.Is(cause, errStalled), errors.Is(cause, errBudget),
		errors.Is(cause, errNoAnswer),
		errors.Is(cause, errChunkTimeout):
		return &Error{Provider: provider, Code: ProviderTimeout, Retryable: true, Err: cause}
	}
	return err
}

// asProviderError is err as an *Error; anything else is an unknown
// failure of the provider's adapter.
func asProviderError(provider string, err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Provider: provider, Code: UnknownProviderError, Err: err}
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
