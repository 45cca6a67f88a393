package openai

import (
	"fmt"
	"net/http"
	"time"

	"github.com/voxgate/voxgate/sim/core"
)

// Chat configures what Chat Completions reports beyond the script's answer:
// which model answered, the rate-limit headers and the prompt cache.
type Chat struct {
	// ModelAliases maps a model alias to the dated snapshot that answers for
	// it, as the real API does: a request for "gpt-4o" gets a response whose
	// model is "gpt-4o-2024-08-06". Nil means DefaultModelAliases(); an
	// empty map means every model is echoed as sent.
	ModelAliases map[string]string `yaml:"model_aliases" json:"model_aliases,omitempty"`
	// ReasoningModels refuse max_tokens (400 unsupported_parameter), as the
	// real reasoning models do; a listed alias covers its snapshot. Nil
	// means DefaultReasoningModels(); an empty list means none.
	ReasoningModels []string `yaml:"reasoning_models" json:"reasoning_models,omitempty"`
	// ToolsNeedNoEffort are models that take function tools over Chat
	// Completions only with reasoning_effort "none" (400 otherwise, the
	// parameter left out included). Nil means DefaultToolsNeedNoEffort().
	ToolsNeedNoEffort []string `yaml:"tools_need_no_effort" json:"tools_need_no_effort,omitempty"`
	// NoEffortRefused are models that refuse reasoning_effort "none" (400
	// unsupported_value). Nil means DefaultNoEffortRefused().
	NoEffortRefused []string `yaml:"no_effort_refused" json:"no_effort_refused,omitempty"`
	// CacheWriteModels report the prompt tokens each request newly writes
	// to the prompt cache as usage.prompt_tokens_details.cache_write_tokens
	// (part of prompt_tokens, apart from cached_tokens), as the models
	// that bill cache writes do. Nil means DefaultCacheWriteModels().
	CacheWriteModels []string `yaml:"cache_write_models" json:"cache_write_models,omitempty"`
	// RateLimits are reported in the x-ratelimit-* headers of each answer.
	RateLimits RateLimits `yaml:"rate_limits" json:"rate_limits"`
	// PromptCache decides which prompt tokens are reported as cached.
	PromptCache PromptCache `yaml:"prompt_cache" json:"prompt_cache"`
	// ContinueFinalMessage makes Chat Completions act as an
	// OpenAI-compatible server that continues a trailing assistant message
	// (vLLM's continue_final_message: true with add_generation_prompt:
	// false). OpenAI's own API refuses both parameters, so it is off by
	// default.
	ContinueFinalMessage bool `yaml:"continue_final_message" json:"continue_final_message,omitempty"`
	// ProjectServiceTier is the tier configured in the project's settings,
	// which serves a request that sets no service_tier or "auto" (the
	// spec's ServiceTier): "default", "flex" or "priority". "" is
	// "default", the spec's "unless otherwise configured".
	ProjectServiceTier string `yaml:"project_service_tier" json:"project_service_tier,omitempty"`
}

// RateLimits are the per-minute limits each API key is given. The simulator
// reports them and what is left; it never enforces them (a rate_limit fault
// does that).
type RateLimits struct {
	// RequestsPerMinute is x-ratelimit-limit-requests. Zero means 10,000.
	RequestsPerMinute int `yaml:"requests_per_minute" json:"requests_per_minute,omitempty"`
	// TokensPerMinute is x-ratelimit-limit-tokens. Zero means 30,000,000.
	TokensPerMinute int `yaml:"tokens_per_minute" json:"tokens_per_minute,omitempty"`
}

// PromptCache shapes the cache of prompt prefixes behind
// usage.prompt_tokens_details.cached_tokens.
type PromptCache struct {
	// TTL is how long a prefix stays cached after its last use. Zero means
	// 5 minutes, the shortest time the real API documents.
	TTL time.Duration `yaml:"ttl" json:"ttl,omitempty"`
	// MaxEntries bounds the cache (one entry per 128-token block of a
	// prefix); the least recently used go first. Zero means 65,536.
	MaxEntries int `yaml:"max_entries" json:"max_entries,omitempty"`
}

const (
	defaultRequestsPerMinute = 10_000
	defaultTokensPerMinute   = 30_000_000
	defaultCacheTTL          = 5 * time.Minute
	defaultCacheEntries      = 1 << 16
)

// DefaultModelAliases returns the aliases used when Chat.ModelAliases is
// nil: each alias the spec lists with its dated snapshot.
func DefaultModelAliases() map[string]string {
	return map[string]string{
		"gpt-4o":       "gpt-4o-2024-08-06",
		"gpt-4o-mini":  "gpt-4o-mini-2024-07-18",
		"gpt-4-turbo":  "gpt-4-turbo-2024-04-09",
		"gpt-4.1":      "gpt-4.1-2025-04-14",
		"gpt-4.1-mini": "gpt-4.1-mini-2025-04-14",
		"gpt-4.1-nano": "gpt-4.1-nano-2025-04-14",
		"o1":           "o1-2024-12-17",
		"o3":           "o3-2025-04-16",
		"o3-mini":      "o3-mini-2025-01-31",
		"o4-mini":      "o4-mini-2025-04-16",
		"gpt-5":        "gpt-5-2025-08-07",
		"gpt-5-mini":   "gpt-5-mini-2025-08-07",
		"gpt-5-nano":   "gpt-5-nano-2025-08-07",
		"gpt-5.1":      "gpt-5.1-2025-11-13",
		"gpt-5.2":      "gpt-5.2-2025-12-11",
		"gpt-5.4-mini": "gpt-5.4-mini-2026-03-17",
		"gpt-5.4-nano": "gpt-5.4-nano-2026-03-17",
		"gpt-5.5":      "gpt-5.5-2026-04-23",
	}
}

// DefaultReasoningModels returns the models used when Chat.ReasoningModels
// is nil: the o-series and the GPT-5 family (not its chat-latest models).
func DefaultReasoningModels() []string {
	return []string{"o1", "o3", "o3-mini", "o4-mini",
		"gpt-5", "gpt-5-mini", "gpt-5-nano", "gpt-5.1", "gpt-5.2", "gpt-5.4", "gpt-5.4-mini", "gpt-5.4-nano", "gpt-5.5"}
}

// DefaultToolsNeedNoEffort: gpt-6-luna's model page limits function calling
// over Chat Completions to reasoning_effort "none".
func DefaultToolsNeedNoEffort() []string { return []string{"gpt-6-luna"} }

// DefaultNoEffortRefused: gpt-6.2-sol's model page says it refuses
// reasoning_effort "none".
func DefaultNoEffortRefused() []string { return []string{"gpt-6.2-sol"} }

// DefaultCacheWriteModels: the GPT-6 chat models bill cache writes as their
// own class (their model pages).
func DefaultCacheWriteModels() []string {
	return []string{"gpt-6-luna", "gpt-6.1-terra", "gpt-6.2-sol"}
}

func (c *Chat) Validate() error {
	for alias, snap := range c.ModelAliases {
		if alias == "" || snap == "" {
			return fmt.Errorf("model_aliases: empty name in %q: %q", alias, snap)
		}
	}
	for i, m := range c.ReasoningModels {
		if m == "" {
			return fmt.Errorf("reasoning_models[%d]: empty name", i)
		}
	}
	switch {
	case c.RateLimits.RequestsPerMinute < 0 || c.RateLimits.TokensPerMinute < 0:
		return fmt.Errorf("rate_limits: values must not be negative")
	case c.PromptCache.TTL < 0 || c.PromptCache.MaxEntries < 0:
		return fmt.Errorf("prompt_cache: values must not be negative")
	}
	switch c.ProjectServiceTier {
	case "", "default", "flex", "priority":
	default:
		return fmt.Errorf("project_service_tier: must be default, flex or priority, got %q", c.ProjectServiceTier)
	}
	return nil
}

// ChatModels resolves model names for Chat Completions.
type ChatModels struct {
	aliases   map[string]string
	allowed   map[string]bool // nil: any model
	reasoning map[string]bool
	toolsNone map[string]bool // tools only with reasoning_effort none
	noneOff   map[string]bool // reasoning_effort none refused
	writes    map[string]bool // report cache_write_tokens
}

func NewChatModels(allowed []string, c Chat) ChatModels {
	m := ChatModels{aliases: c.ModelAliases}
	if m.aliases == nil {
		m.aliases = DefaultModelAliases()
	}
	reasoning := c.ReasoningModels
	if reasoning == nil {
		reasoning = DefaultReasoningModels()
	}
	if len(allowed) > 0 {
		m.allowed = m.withSnapshots(allowed)
	}
	m.reasoning = m.withSnapshots(reasoning)
	m.toolsNone = m.withSnapshots(orDefault(c.ToolsNeedNoEffort, DefaultToolsNeedNoEffort))
	m.noneOff = m.withSnapshots(orDefault(c.NoEffortRefused, DefaultNoEffortRefused))
	m.writes = m.withSnapshots(orDefault(c.CacheWriteModels, DefaultCacheWriteModels))
	return m
}

func (m *ChatModels) billsCacheWrites(name string) bool {
	return m.writes[name] || m.writes[m.Snapshot(name)]
}

func orDefault(list []string, def func() []string) []string {
	if list == nil {
		return def()
	}
	return list
}

// checkEffort applies the models' rules on reasoning_effort, with the real
// API's 400s.
func (m *ChatModels) checkEffort(req *ChatRequest) error {
	none := req.ReasoningEffort != nil && *req.ReasoningEffort == "none"
	is := func(set map[string]bool) bool { return set[req.Model] || set[m.Snapshot(req.Model)] }
	switch {
	case none && is(m.noneOff):
		return &core.APIError{Status: http.StatusBadRequest, Type: "invalid_request_error", Param: "reasoning_effort",
			Code: "unsupported_value", Message: "Unsupported value: 'reasoning_effort' does not support 'none' with this model."}
	case len(req.Tools) > 0 && !none && is(m.toolsNone):
		return &core.APIError{Status: http.StatusBadRequest, Type: "invalid_request_error", Param: "reasoning_effort",
			Code: "unsupported_value", Message: fmt.Sprintf("Function tools with reasoning_effort are not supported for %s in /v1/chat/completions. Set reasoning_effort to 'none', or use /v1/responses.", req.Model)}
	}
	return nil
}

// withSnapshots is the set of names plus the snapshot of each alias among
// them: listing an alias lists the model, whichever name a request uses.
func (m *ChatModels) withSnapshots(names []string) map[string]bool {
	out := make(map[string]bool, 2*len(names))
	for _, n := range names {
		out[n] = true
		if snap, ok := m.aliases[n]; ok {
			out[snap] = true
		}
	}
	return out
}

// Snapshot is the model that answers a request for name.
func (m *ChatModels) Snapshot(name string) string {
	if snap, ok := m.aliases[name]; ok {
		return snap
	}
	return name
}

// Accepts reports whether name, or the snapshot it resolves to, is allowed.
func (m *ChatModels) Accepts(name string) bool {
	return m.allowed == nil || m.allowed[name] || m.allowed[m.Snapshot(name)]
}

func (m *ChatModels) IsReasoning(name string) bool {
	return m.reasoning[name] || m.reasoning[m.Snapshot(name)]
}
