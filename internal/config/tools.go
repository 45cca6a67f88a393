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
	// SQL are read-only tools over the user's own rows: one fixed query
	// each, or (open: true) one SELECT the model writes.
	SQL []SQLTool `yaml:"sql"`
	// MCP are servers whose allowlisted tools join the registry.
	MCP []MCPServer `yaml:"mcp"`
}

// SQLTool is a SQL tool (DESIGN §8). Its statement runs as voxgate_reader
// in a READ ONLY transaction, with the user's id set for row-level
// security, and returns at most 100 rows.
type SQLTool struct {
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
	// Views are the schema-qualified views the statement may read.
	Views []string `yaml:"views"`
	// Open lets the model write the statement (one SELECT over Views,
	// functions from Functions); otherwise Query is the statement.
	Open bool `yaml:"open"`
	// Functions replaces the default function allowlist of an open tool.
	Functions []string `yaml:"functions"`
	// Query is a fixed tool's one SELECT; $1, $2, ... bind Args.
	Query string `yaml:"query"`
	// Args names, in placeholder order, the parameters that bind $1, $2, ...
	Args []string `yaml:"args"`
	// Parameters is the JSON Schema of a fixed tool's arguments.
	Parameters map[string]any `yaml:"parameters"`
	// Notice is added to every answer ("This isn't medical advice.").
	Notice           string        `yaml:"notice"`
	Voice            bool          `yaml:"voice"`
	Plans            []string      `yaml:"plans"`
	Timeout          time.Duration `yaml:"timeout"`
	StatementTimeout time.Duration `yaml:"statement_timeout"`
	MaxTokens        int           `yaml:"max_tokens"`
}

// MCPServer is a Model Context Protocol server whose tools join the
// registry under "<name>__<tool>".
type MCPServer struct {
	Name string `yaml:"name"`
	// URL is a streamable HTTP endpoint; Command runs a local server over
	// stdio instead. Exactly one is set.
	URL     string   `yaml:"url"`
	Command []string `yaml:"command"`
	// Tools is the allowlist: only these of the server's tools are exposed.
	Tools []string `yaml:"tools"`
	// Voice and Tier apply to every tool of the server; the defaults are
	// not voice and tier standard.
	Voice   *bool         `yaml:"voice"`
	Tier    string        `yaml:"tier"`
	Plans   []string      `yaml:"plans"`
	Timeout time.Duration `yaml:"timeout"`
	// MaxResponseBytes caps a call's answer; 0 means 64 KiB.
	MaxResponseBytes int64 `yaml:"max_response_bytes"`
	MaxTokens        int   `yaml:"max_tokens"`
	// Refresh is how often the tool list is read again; 0 means 5 minutes.
	Refresh time.Duration `yaml:"refresh"`
	// IdentityHeader, when set, sends the user's id to an HTTP server in
	// this header, signed with the secret named by SecretEnv
	// (X-Voxgate-Signature over the id). Never as an argument.
	IdentityHeader string `yaml:"identity_header"`
	SecretEnv      string `yaml:"secret_env"`
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
	// Measures declares which argument holds which measure of DESIGN §12
	// (argument → measure: {weight: weight_kg}); the executor checks each
	// against its range before the webhook is called. Unknown measures
	// and arguments stop startup.
	Measures  map[string]string `yaml:"measures"`
	Plans     []string          `yaml:"plans"` // empty: every plan
	Timeout   time.Duration     `yaml:"timeout"`
	MaxTokens int               `yaml:"max_tokens"`
	// MaxResponseBytes caps the receiver's answer; 0 means 64 KiB.
	MaxResponseBytes int64 `yaml:"max_response_bytes"`
	// Card, when set, also hands the receiver's answer to the app as a
	// card of this kind (a-z and _), so an app gets a webhook's structured
	// answer in the chat response, not only the model's words about it.
	Card string `yaml:"card"`
	// Partial sends that card as soon as the call returns (an SSE partial
	// event, DESIGN §7), before the model's words about it; it is still
	// in the final response's cards, once. Needs Card.
	Partial bool `yaml:"partial"`
}

// DefaultTools has no webhooks; the built-in tools need no config.
func DefaultTools() Tools { return Tools{} }
