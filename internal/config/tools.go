package config

import "time"

// Tools configures the tool registry (DESIGN §8): overrides for the built-in
// tools and webhook tools. This package only decodes them; package tools
// checks them when it builds its registry, at startup, and the message
// names the key to fix (docs/tools.md).
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

// DefaultTools has no webhooks; the built-in tools need no config.
func DefaultTools() Tools { return Tools{} }
