package llm

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/internal/modelname"
)

// DefaultRouteBudget bounds a routed call's time to its first content,
// every attempt and wait included (DESIGN §11: 25 s for the whole route).
const DefaultRouteBudget = 25 * time.Second

// DefaultRetryDelay is the wait before the one retry of a target that gave
// no Retry-After: enough for a reset connection to be redialled, short
// beside the budget.
const DefaultRetryDelay = 250 * time.Millisecond

// Target is one provider and model a route may try.
type Target struct {
	// Provider is a configured provider's name (RouterParams.Providers).
	Provider string
	Model    string
	// FirstContent bounds an attempt's wait for its first text or tool-call
	// delta; 0 is DefaultTimeout, or DefaultReasoningFirstChunk for a
	// reasoning model (DefaultFirstChunkTimeouts).
	FirstContent time.Duration
	// Stall bounds the gap between two chunks before the first content
	// (a role frame, then silence); 0 leaves only FirstContent.
	Stall time.Duration
	// Timeout bounds each wait for a next chunk after the first content;
	// 0 is DefaultTimeout.
	Timeout time.Duration
	// MaxTokens caps the answer (a request asking for less keeps its
	// own); 0 leaves the request's.
	MaxTokens int
	// ContextWindow is the model's declared context size in tokens; a call
	// refused for its length fails over only to a target declaring more.
	// 0 is undeclared.
	ContextWindow int
	// Continue is how the target continues an answer cut after commit on
	// this or another target: ContinuePrefill, or "" for none (docs/llm.md,
	// "Continuation").
	Continue string
	// PromptCacheTTL is sent as every request's prompt cache TTL
	// (Request.PromptCacheTTL): "30m", "12h", or "" for none.
	PromptCacheTTL string
	// ServiceTier is sent as every request's service tier
	// (Request.ServiceTier): config.ServiceTiers, or "" for none.
	ServiceTier string
}

// ContinuePrefill is a target that continues a partial answer given as a
// trailing assistant message (Request.Continue): Anthropic's models before
// Claude 4.6, OpenAI-compatible servers that take continue_final_message.
const ContinuePrefill = config.ContinuePrefill

// String names the target as traces do: "<provider>/<model>".
func (t Target) String() string { return t.Provider + "/" + t.Model }

// Route is a name callers send as Request.Model and the targets it tries,
// in order.
type Route struct {
	Name    string
	Targets []Target
	// Budget bounds the time to the first content; 0 is DefaultRouteBudget.
	Budget time.Duration
}

// RouterParams configure a Router.
type RouterParams struct {
	// Providers are the configured providers by name. A target whose
	// provider is not here (no key, no adapter) is traced not_configured.
	Providers map[string]Provider
	Routes    []Route
	// Registerer takes the router's metrics; nil registers none.
	Registerer prometheus.Registerer
	// Now is the breakers' clock; nil is time.Now.
	Now func() time.Time
	// RetryDelay is the wait before a retry without Retry-After; 0 is
	// DefaultRetryDelay.
	RetryDelay time.Duration
	// AnswerTime is what a whole call is given beyond its target's first
	// content; 0 is AnswerTime (tests shorten it).
	AnswerTime time.Duration
}

// Router is a Provider whose Request.Model names a route: it tries the
// route's targets in order until one commits (its first text or tool-call
// delta), with the retries, failover, breakers and budget of DESIGN §11,
// and streams that target's answer. It is safe for concurrent use.
type Router struct {
	providers  map[string]Provider
	routes     map[string]Route
	breakers   map[string]*breaker // by Target.String; shared across routes
	order      []Target            // each target once, for Status
	now        func() time.Time
	retryDelay time.Duration
	answerTime time.Duration
	metrics    *routerMetrics
}

var _ Provider = (*Router)(nil)

// NewRouter checks p and builds the router.
func NewRouter(p RouterParams) (*Router, error) {
	r := &Router{providers: p.Providers, routes: map[string]Route{}, breakers: map[string]*breaker{},
		now: p.Now, retryDelay: p.RetryDelay, answerTime: p.AnswerTime}
	if r.now == nil {
		r.now = time.Now
	}
	if r.retryDelay <= 0 {
		r.retryDelay = DefaultRetryDelay
	}
	if r.answerTime <= 0 {
		r.answerTime = AnswerTime
	}
	for _, rt := range p.Routes {
		if err := checkRoute(rt); err != nil {
			return nil, err
		}
		if _, dup := r.routes[rt.Name]; dup {
			return nil, fmt.Errorf("llm: router: route %q is defined twice", rt.Name)
		}
		if rt.Budget == 0 {
			rt.Budget = DefaultRouteBudget
		}
		for i, t := range rt.Targets {
			rt.Targets[i] = withDefaults(t)
			if r.breakers[t.String()] == nil {
				r.breakers[t.String()] = newBreaker()
				r.order = append(r.order, rt.Targets[i])
			}
		}
		r.routes[rt.Name] = rt
	}
	m, err := newRouterMetrics(p.Registerer, r)
	if err != nil {
		return nil, err
	}
	r.metrics = m
	return r, nil
}

func checkRoute(rt Route) error {
	if rt.Name == "" {
		return errors.New("llm: router: a route needs a name")
	}
	if len(rt.Targets) == 0 {
		return fmt.Errorf("llm: router: route %q has no targets", rt.Name)
	}
	if rt.Budget < 0 {
		return fmt.Errorf("llm: router: route %q: budget must not be negative", rt.Name)
	}
	for i, t := range rt.Targets {
		if t.Provider == "" || t.Model == "" {
			return fmt.Errorf("llm: router: route %q: targets[%d] needs a provider and a model", rt.Name, i)
		}
		if t.FirstContent < 0 || t.Stall < 0 || t.Timeout < 0 || t.MaxTokens < 0 || t.ContextWindow < 0 {
			return fmt.Errorf("llm: router: route %q: targets[%d]: deadlines and sizes must not be negative", rt.Name, i)
		}
		if t.PromptCacheTTL != "" && t.PromptCacheTTL != CacheTTL30m && t.PromptCacheTTL != CacheTTL12h {
			return fmt.Errorf("llm: router: route %q: targets[%d]: prompt_cache_ttl must be %q, %q or empty, got %q", rt.Name, i, CacheTTL30m, CacheTTL12h, t.PromptCacheTTL)
		}
		if t.ServiceTier != "" && !slices.Contains(config.ServiceTiers, t.ServiceTier) {
			return fmt.Errorf("llm: router: route %q: targets[%d]: service_tier %q is not one of %v", rt.Name, i, t.ServiceTier, config.ServiceTiers)
		}
		if t.Continue != "" && t.Continue != ContinuePrefill {
			return fmt.Errorf("llm: router: route %q: targets[%d]: continue must be %q or empty, got %q", rt.Name, i, ContinuePrefill, t.Continue)
		}
	}
	return nil
}

// withDefaults fills a target's deadlines: a reasoning model is silent
// while it thinks, so its first content gets the longer wait.
func withDefaults(t Target) Target {
	if t.FirstContent == 0 {
		t.FirstContent = DefaultTimeout
		if d, ok := modelname.Lookup(DefaultFirstChunkTimeouts(), t.Model); ok {
			t.FirstContent = d
		}
	}
	if t.Stall == 0 || t.Stall > t.FirstContent {
		t.Stall = t.FirstContent
	}
	if t.Timeout == 0 {
		t.Timeout = DefaultTimeout
	}
	return t
}

// Name is "router"; the provider that answered is in the trace.
func (r *Router) Name() string { return "router" }

// Routes lists the route names in order, for a models list.
func (r *Router) Routes() []string {
	out := make([]string, 0, len(r.routes))
	for name := range r.routes {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

// Models lists route's target models in order, none for an unknown route:
// any of them may answer, so a reservation prices at the dearest.
func (r *Router) Models(route string) []string {
	rt := r.routes[route]
	out := make([]string, 0, len(rt.Targets))
	for _, t := range rt.Targets {
		out = append(out, t.Model)
	}
	return out
}

// Unhonoured names a field of req that no target of route can honour
// ("tools[0].function.strict"), "" when one can (or the route is
// unknown): a caller refuses such a request before spending anything on
// it. A target whose provider is not configured counts as able: it is
// passed over for that, not for the request.
func (r *Router) Unhonoured(route string, req Request) string {
	rt, ok := r.routes[route]
	if !ok {
		return ""
	}
	first := ""
	for _, t := range rt.Targets {
		field := unhonoured(r.providers[t.Provider], req)
		if field == "" {
			return ""
		}
		if first == "" {
			first = field
		}
	}
	return first
}

// unhonoured is Limited.Unhonoured of p, "" for a provider that takes
// every request (or none).
func unhonoured(p Provider, req Request) string {
	if l, ok := p.(Limited); ok {
		return l.Unhonoured(req)
	}
	return ""
}

// Stream runs req.Model's route until a target commits, and returns that
// target's stream. A failure before commit is a *RouteError (its Err an
// *Error when a provider failed); the caller's own cancellation is its
// context's error. Events from the returned stream are the target's; its
// EventDone carries the Trace, and a failure after commit is a *RouteError
// with Committed set.
func (r *Router) Stream(ctx context.Context, req Request) (Stream, error) {
	rt, ok := r.routes[req.Model]
	if !ok {
		return nil, &RouteError{Route: req.Model, Outcome: RouteRefused, Err: ErrUnknownRoute}
	}
	c := &call{r: r, route: rt, req: req, deadline: time.Now().Add(rt.Budget)}
	return c.run(ctx)
}
