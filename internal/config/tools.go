package config

import (
	"fmt"
	"net/url"
	"regexp"
	"time"
)

// Tools configures the tool registry (DESIGN §8): overrides for the built-in
// tools and webhook tools. Checks that need the JSON-Schema compiler or the
// environment (schemas, user_id parameters, secrets, plan names) run when
// package tools builds its registry, which is still at startup.
type Tools struct {
	// Builtins adjusts built-in tools by name: gate them by plan, change
	// their budget, or switch them off.
	Builtins map[string]BuiltinTool `yaml:"builtins"`
	// Webhooks are tools executed by POSTing to a fixed URL.
	Webhooks []WebhookTool `yaml:"webhooks"`
}

// BuiltinTool overrides a built-in tool's operator-facing settings. Zero
// values keep the built-in's own.
type BuiltinTool struct {
	Disabled  bool          `yaml:"disabled"`
	Voice     *bool         `yaml:"voice"`
	Plans     []string      `yaml:"plans"`
	Timeout   time.Duration `yaml:"timeout"`
	MaxTokens int           `yaml:"max_tokens"`
}

// WebhookTool is a tool executed by POSTing to a fixed URL.
type WebhookTool struct {
	Name        string         `yaml:"name"`
	Description string         `yaml:"description"`
	URL         string         `yaml:"url"`
	SecretEnv   string         `yaml:"secret_env"`
	Parameters  map[string]any `yaml:"parameters"`
	// Output, when set, is a JSON Schema the receiver's answer must match.
	Output      map[string]any `yaml:"output"`
	Voice       bool           `yaml:"voice"`
	Tier        string         `yaml:"tier"`         // none (default) | standard | elevated
	SafetyLevel string         `yaml:"safety_level"` // safe (default) | review | restricted
	WritesTo    []string       `yaml:"writes_to"`
	Plans       []string       `yaml:"plans"` // empty: every plan
	Timeout     time.Duration  `yaml:"timeout"`
	MaxTokens   int            `yaml:"max_tokens"`
	// MaxResponseBytes caps the receiver's answer; 0 means 64 KiB.
	MaxResponseBytes int64 `yaml:"max_response_bytes"`
}

// Tool limits shared by the config checks and package tools.
const (
	DefaultToolTimeout        = 5 * time.Second
	MaxToolTimeout            = 60 * time.Second
	DefaultToolMaxTokens      = 1000
	MaxToolMaxTokens          = 16000
	DefaultWebhookMaxResponse = 64 << 10
	MaxWebhookMaxResponse     = 4 << 20
)

// ToolNameRE is the name rule every provider accepts for function names.
var ToolNameRE = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// envNameRE keeps secret_env to a plain environment variable name.
var envNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// DefaultTools has no webhooks; the built-in tools need no config.
func DefaultTools() Tools { return Tools{} }

func (t Tools) validate() []error {
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("config: %s: %s", key, fmt.Sprintf(format, args...)))
	}
	for name, b := range t.Builtins {
		key := "tools.builtins." + name
		if !ToolNameRE.MatchString(name) {
			bad(key, "%q is not a valid tool name", name)
		}
		checkBudget(bad, key, b.Timeout, b.MaxTokens)
	}
	seen := map[string]int{}
	for i, w := range t.Webhooks {
		key := fmt.Sprintf("tools.webhooks[%d]", i)
		if w.Name != "" {
			key = fmt.Sprintf("tools.webhooks[%d] (%s)", i, w.Name)
		}
		if !ToolNameRE.MatchString(w.Name) {
			bad(key+".name", "%q must be 1–64 letters, digits, _ or -", w.Name)
		}
		if j, dup := seen[w.Name]; dup {
			bad(key+".name", "%q is also the name of tools.webhooks[%d]", w.Name, j)
		}
		seen[w.Name] = i
		if _, builtin := t.Builtins[w.Name]; builtin {
			bad(key+".name", "%q is configured under tools.builtins too", w.Name)
		}
		if w.Description == "" {
			bad(key+".description", "must not be empty: the model chooses tools by it")
		}
		if u, err := url.Parse(w.URL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			bad(key+".url", "must be an absolute http(s) URL")
		} else if u.User != nil {
			bad(key+".url", "must not carry credentials; use secret_env for the signing secret")
		}
		if !envNameRE.MatchString(w.SecretEnv) {
			bad(key+".secret_env", "must name the environment variable that holds the signing secret")
		}
		if w.Parameters == nil {
			bad(key+".parameters", "a JSON Schema is required (use {type: object} for none)")
		}
		switch w.Tier {
		case "", "none", "standard", "elevated":
		default:
			bad(key+".tier", "%q must be none, standard or elevated", w.Tier)
		}
		if w.Voice && w.Tier != "" && w.Tier != "none" {
			bad(key+".voice", "a voice tool must have tier none: voice has no confirmation card")
		}
		switch w.SafetyLevel {
		case "", "safe", "review", "restricted":
		default:
			bad(key+".safety_level", "%q must be safe, review or restricted", w.SafetyLevel)
		}
		checkBudget(bad, key, w.Timeout, w.MaxTokens)
		if w.MaxResponseBytes < 0 || w.MaxResponseBytes > MaxWebhookMaxResponse {
			bad(key+".max_response_bytes", "must be between 0 (default 65536) and %d, got %d", MaxWebhookMaxResponse, w.MaxResponseBytes)
		}
	}
	return errs
}

func checkBudget(bad func(key, format string, args ...any), key string, timeout time.Duration, maxTokens int) {
	if timeout < 0 || timeout > MaxToolTimeout {
		bad(key+".timeout", "must be between 0 (default 5s) and %s, got %s", MaxToolTimeout, timeout)
	}
	if maxTokens < 0 || maxTokens > MaxToolMaxTokens {
		bad(key+".max_tokens", "must be between 0 (default %d) and %d, got %d", DefaultToolMaxTokens, MaxToolMaxTokens, maxTokens)
	}
}
