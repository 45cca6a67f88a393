package config

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Provider kinds: the adapters the router has (DESIGN §11). Any
// OpenAI-compatible server is an openai provider.
const (
	KindOpenAI    = "openai"
	KindAnthropic = "anthropic"
	KindGemini    = "gemini"
)

// kindEnv is, per kind, the environment variables its SDK reads for the
// base URL and the key: the defaults of a provider that names neither, so
// that `voxgate dev` points all three at the simulator the way each SDK
// would be pointed.
var kindEnv = map[string]struct{ baseURL, key string }{
	KindOpenAI:    {"OPENAI_BASE_URL", "OPENAI_API_KEY"},
	KindAnthropic: {"ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY"},
	KindGemini:    {"GOOGLE_GEMINI_BASE_URL", "GEMINI_API_KEY"},
}

// Provider is one entry of providers.
type Provider struct {
	Name string `yaml:"name"`
	Kind string `yaml:"kind"`
	// BaseURL is the API base; "" takes the kind's variable
	// (OPENAI_BASE_URL, ANTHROPIC_BASE_URL, GOOGLE_GEMINI_BASE_URL), and
	// without it the SDK's own default.
	BaseURL string `yaml:"base_url"`
	// KeyEnv names the variable holding the key; "" is the kind's
	// (OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY). Keys never come
	// from the file.
	KeyEnv string `yaml:"key_env"`
	// Store lets a provider that keeps requests unless told not to (the
	// Gemini API, for new paid projects since 2026-10-26) keep them. Off by
	// default: voice transcripts and health talk are not to be stored.
	Store bool `yaml:"store"`
}

// Resolve is the provider's base URL and key from getenv, defaults
// applied. An empty key means the provider is not configured.
func (p Provider) Resolve(getenv func(string) string) (baseURL, key string) {
	env := kindEnv[p.Kind]
	baseURL = p.BaseURL
	if baseURL == "" && env.baseURL != "" {
		baseURL = getenv(env.baseURL)
	}
	keyEnv := p.KeyEnv
	if keyEnv == "" {
		keyEnv = env.key
	}
	if keyEnv != "" {
		key = getenv(keyEnv)
	}
	return baseURL, key
}

// Route is one entry of routes: a name chat and /v1/chat/completions
// callers use, and the targets it tries in order.
type Route struct {
	Name string `yaml:"name"`
	// Budget bounds the time to the first content over every attempt; 0
	// is the router's default (25 s).
	Budget  time.Duration `yaml:"budget"`
	Targets []RouteTarget `yaml:"targets"`
}

// RouteTarget is one provider and model of a route. Zero durations take
// the router's defaults (10 s; longer to a reasoning model's first
// content).
type RouteTarget struct {
	Provider string `yaml:"provider"`
	Model    string `yaml:"model"`
	// FirstContent bounds the wait for the first text or tool call.
	FirstContent time.Duration `yaml:"first_content"`
	// Stall bounds a silence between chunks before the first content.
	Stall time.Duration `yaml:"stall"`
	// Timeout bounds a silence between chunks after it.
	Timeout time.Duration `yaml:"timeout"`
	// MaxTokens caps the answer (Anthropic requires one).
	MaxTokens int `yaml:"max_tokens"`
	// ContextWindow declares the model's context size, in tokens: a
	// request too long for one target fails over only to a larger one.
	ContextWindow int `yaml:"context_window"`
	// Continue declares how the target continues an answer another
	// attempt began and was cut after commit: "prefill" (the partial
	// answer goes as a trailing assistant message, which the model
	// continues) or "" for none (docs/llm.md, "Continuation").
	Continue string `yaml:"continue"`
	// PromptCacheTTL asks an openai target's prompt cache writes to live
	// "30m" or "12h" (the API's prompt_cache_options.ttl); "" sends
	// nothing. A 12-hour write costs twice a 30-minute one, and the
	// ledger prices the writes by the TTL asked (docs/billing.md).
	PromptCacheTTL string `yaml:"prompt_cache_ttl"`
	// ServiceTier asks an openai target's calls to be served on a tier
	// (the API's service_tier): "auto", "default", "flex", "priority" or
	// "fast" (answered as priority); "" sends nothing, which the API
	// takes as auto, the project's setting. The ledger prices a call by
	// the tier its response names, not this one (docs/billing.md).
	// "scale" is refused: Scale Tier is billed by reserved units, and the
	// ledger has no per-token multiple for it.
	ServiceTier string `yaml:"service_tier"`
	// API is the API an openai target is called over: "chat_completions"
	// (or "", the default) or "responses", which keeps a reasoning
	// model's reasoning across a tool loop (docs/llm.md, "Responses
	// upstream"). One provider calls one model over one API.
	API string `yaml:"api"`
}

// The APIs an openai target may be called over (RouteTarget.API).
const (
	APIChatCompletions = "chat_completions"
	APIResponses       = "responses"
)

// ServiceTiers are the tiers a target may ask (RouteTarget.ServiceTier):
// the Chat Completions request's service_tier values but scale.
var ServiceTiers = []string{"auto", "default", "flex", "priority", "fast"}

// ContinuePrefill is RouteTarget.Continue for a target that continues a
// partial answer given as a trailing assistant message.
const ContinuePrefill = "prefill"

// DefaultRoute is the route chat uses unless chat.route names another.
const DefaultRoute = "default"

// DefaultProviders is one provider of each kind, named for it, with its
// SDK's variables: a key in the environment is all it takes to use one.
func DefaultProviders() []Provider {
	return []Provider{{Name: KindOpenAI, Kind: KindOpenAI}, {Name: KindAnthropic, Kind: KindAnthropic},
		{Name: KindGemini, Kind: KindGemini}}
}

// RouteList is the configured routes; a file without any has the one
// route chat has always had, "default": chat.model on OpenAI.
func (c *Config) RouteList() []Route {
	if len(c.Routes) > 0 {
		return c.Routes
	}
	return []Route{{Name: DefaultRoute, Targets: []RouteTarget{{Provider: KindOpenAI, Model: c.Chat.Model}}}}
}

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func (c *Config) validateRouting() []error {
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("config: %s: %s", key, fmt.Sprintf(format, args...)))
	}
	providers := map[string]bool{}
	kinds := map[string]string{}
	for i, p := range c.Providers {
		key := fmt.Sprintf("providers[%d]", i)
		switch {
		case p.Name == "":
			bad(key+".name", "must not be empty")
		case providers[p.Name]:
			bad(key+".name", "%q is defined twice", p.Name)
		}
		providers[p.Name] = true
		kinds[p.Name] = p.Kind
		if _, ok := kindEnv[p.Kind]; !ok {
			bad(key+".kind", "must be openai, anthropic or gemini, got %q", p.Kind)
		}
		if p.BaseURL != "" && !strings.HasPrefix(p.BaseURL, "http://") && !strings.HasPrefix(p.BaseURL, "https://") {
			bad(key+".base_url", "must start with http:// or https://, got %q", p.BaseURL)
		}
		if p.KeyEnv != "" && !envName.MatchString(p.KeyEnv) {
			bad(key+".key_env", "must be an environment variable's name (the key itself never goes in the file), got %q", p.KeyEnv)
		}
		if p.Store && p.Kind != KindGemini {
			// Only the Gemini adapter sends store; on another kind the
			// setting would be read as honoured and do nothing.
			bad(key+".store", "only a provider of kind gemini takes it (%q is %s)", p.Name, p.Kind)
		}
	}
	routes := map[string]bool{}
	for i, r := range c.RouteList() {
		key := fmt.Sprintf("routes[%d]", i)
		switch {
		case r.Name == "":
			bad(key+".name", "must not be empty")
		case routes[r.Name]:
			bad(key+".name", "%q is defined twice", r.Name)
		}
		routes[r.Name] = true
		if r.Budget < 0 || r.Budget > 10*time.Minute {
			bad(key+".budget", "must be between 0s and 10m, got %s", r.Budget)
		}
		if len(r.Targets) == 0 {
			bad(key+".targets", "must list at least one target")
		}
		for j, t := range r.Targets {
			tk := fmt.Sprintf("%s.targets[%d]", key, j)
			if !providers[t.Provider] {
				bad(tk+".provider", "%q is not among providers", t.Provider)
			}
			if t.Model == "" {
				bad(tk+".model", "must not be empty")
			}
			if t.FirstContent < 0 || t.Stall < 0 || t.Timeout < 0 {
				bad(tk, "first_content, stall and timeout must not be negative")
			}
			if t.MaxTokens < 0 || t.ContextWindow < 0 {
				bad(tk, "max_tokens and context_window must not be negative")
			}
			switch {
			case t.PromptCacheTTL != "" && t.PromptCacheTTL != "30m" && t.PromptCacheTTL != "12h":
				bad(tk+".prompt_cache_ttl", "must be 30m, 12h or empty, got %q", t.PromptCacheTTL)
			case t.PromptCacheTTL != "" && kinds[t.Provider] != KindOpenAI:
				// Only OpenAI's API takes a cache TTL the gateway sends and
				// prices; Anthropic's cache_control is another setting.
				bad(tk+".prompt_cache_ttl", "provider %q is not of kind openai", t.Provider)
			}
			switch {
			case t.ServiceTier != "" && !slices.Contains(ServiceTiers, t.ServiceTier):
				bad(tk+".service_tier", "must be one of %s or empty, got %q", strings.Join(ServiceTiers, ", "), t.ServiceTier)
			case t.ServiceTier != "" && kinds[t.Provider] != KindOpenAI:
				// Anthropic's service_tier names other choices
				// (standard_only), and the ledger prices only OpenAI's.
				bad(tk+".service_tier", "provider %q is not of kind openai", t.Provider)
			}
			switch {
			case t.API != "" && t.API != APIChatCompletions && t.API != APIResponses:
				bad(tk+".api", "must be %s, %s or empty, got %q", APIChatCompletions, APIResponses, t.API)
			case t.API != "" && kinds[t.Provider] != KindOpenAI:
				bad(tk+".api", "provider %q is not of kind openai", t.Provider)
			case t.API == APIResponses && t.Continue == ContinuePrefill:
				// The Responses API has no way to continue a partial
				// answer (no continue_final_message).
				bad(tk+".continue", "a target with api: responses cannot continue a partial answer")
			}
			switch {
			case t.Continue != "" && t.Continue != ContinuePrefill:
				bad(tk+".continue", "must be %q or empty, got %q", ContinuePrefill, t.Continue)
			case t.Continue == ContinuePrefill && kinds[t.Provider] == KindGemini:
				// The gateway's Gemini adapter has no way to ask for a
				// continuation; Anthropic models before 4.6 and
				// OpenAI-compatible servers that take
				// continue_final_message do.
				bad(tk+".continue", "provider %q is of kind gemini, which cannot continue a partial answer", t.Provider)
			}
		}
	}
	names := routeNames(c.RouteList())
	if !routes[c.Chat.Route] {
		bad("chat.route", "%q is not among routes (have %v)", c.Chat.Route, names)
	}
	c.checkSafety(routes, names, bad)
	// A plan naming a route that does not exist would silently narrow
	// what its users may call (a typo hides a route from GET /v1/models):
	// refused at startup, like chat.route.
	for _, plan := range c.Quota.PlanNames() {
		for _, r := range c.Quota.Plans[plan].Routes {
			if !routes[r] {
				bad("quota.plans."+plan+".routes", "%q is not among routes (have %v)", r, names)
			}
		}
	}
	return errs
}

// routeNames are rs's names, in order, for messages.
func routeNames(rs []Route) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.Name
	}
	return out
}
