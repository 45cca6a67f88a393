// Package tools is the one tool registry used by voice and text chat
// (DESIGN §8): definitions with JSON-Schema parameters, an executor that
// validates, gates by plan, enforces timeouts, recovers panics and runs each
// (session, call_id) exactly once across replicas, a shaper that turns tool
// results into a bounded string for the model and cards for the app, and
// webhook tools. It knows neither voice nor chat: callers say which kind of
// session a call belongs to and who is calling.
package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/safety"
)

// Tier is a tool's confirmation tier (DESIGN §7).
type Tier string

// The tiers: reads need no confirmation, writes and account operations do.
const (
	TierNone     Tier = "none"
	TierStandard Tier = "standard"
	TierElevated Tier = "elevated"
)

// SafetyLevel says how carefully a tool's output must be treated.
type SafetyLevel string

// The safety levels of DESIGN §8.
const (
	SafetySafe       SafetyLevel = "safe"
	SafetyReview     SafetyLevel = "review"
	SafetyRestricted SafetyLevel = "restricted"
)

// SessionKind is the kind of session a call belongs to. The executor only
// records it and uses it to apply the voice allowlist.
type SessionKind string

// The session kinds.
const (
	KindVoice SessionKind = "voice"
	KindChat  SessionKind = "chat"
)

// RunFunc is a tool's body. It gets the validated arguments and the
// authenticated user; it must honour ctx, which carries the tool's timeout.
// An error it returns becomes a failed call whose message the model reads,
// so it must be client-safe: use Failf.
type RunFunc func(ctx context.Context, inv Invocation) (Outcome, error)

// Tool is one tool definition. Built-ins construct it in Go; webhook tools
// are built from config. The registry fills defaults and compiles the
// schemas once.
type Tool struct {
	Name        string
	Description string
	// Parameters is the JSON Schema of the arguments; its top level must be
	// an object schema. A user id is never a parameter.
	Parameters json.RawMessage
	// OutputSchema, when set, is checked against what the tool returns.
	OutputSchema json.RawMessage
	Voice        bool
	Tier         Tier
	SafetyLevel  SafetyLevel
	WritesTo     []string
	Plans        []string // empty: every plan
	Timeout      time.Duration
	MaxTokens    int
	// Measures declares which argument holds which measure of DESIGN §12
	// (argument name → safety measure: {"weight": "weight_kg"}). The
	// executor checks each against its range before the body runs, and a
	// value out of range blocks the call (guard.go).
	Measures map[string]string
	// Proposes says the body honours Invocation.DryRun with a proposal of
	// its own. In dry run the executor never runs a write tool that does
	// not: it answers the proposal for it.
	Proposes bool
	// PrivateArguments says the app must never see this tool's arguments
	// (an open SQL tool's statement, DESIGN §8): whoever shows or stores
	// calls for the app leaves them out. Only the model and tool_calls
	// hold them.
	PrivateArguments bool
	Run              RunFunc

	// source is "builtin", "webhook", "sql" or "mcp", for listings and logs.
	source string
	// sandboxed marks a SQL tool, whatever its source: it needs
	// CheckSQLSandbox to pass.
	sandboxed bool
	params    *jsonschema.Schema
	output    *jsonschema.Schema
}

// Invocation is what a tool body receives.
type Invocation struct {
	UserID      string // the authenticated user, never taken from arguments
	SessionID   string
	SessionKind SessionKind
	CallID      string
	Plan        string
	// Args are the arguments after validation, as a JSON object.
	Args json.RawMessage
	// DryRun (VOXGATE_DRY_RUN) asks a tool that Proposes for a proposal
	// instead of its write.
	DryRun bool
	// metrics are the running executor's; nil when a body is called
	// directly.
	metrics *metrics
}

// Decode unmarshals the validated arguments into v.
func (inv Invocation) Decode(v any) error {
	if err := json.Unmarshal(inv.Args, v); err != nil {
		return Failf("invalid_arguments", "The arguments could not be read: %v", err)
	}
	return nil
}

// Outcome is what a tool body returns. The shaper turns it into a Result.
type Outcome struct {
	// Data is the structured result for the app.
	Data any
	// Model is the compact view the model reads; nil means Data. Keep it
	// small: it is cut to the tool's max_tokens.
	Model any
	// Cards are rendered by the app in the final response; Partials are
	// sent early, as soon as this call finishes (DESIGN §7 `partial`).
	Cards    []Card
	Partials []Card
	Flags    []safety.Flag
	Writes   []DBWrite
}

// Card is one structured item for the app: {kind, data}.
type Card struct {
	Kind string          `json:"kind"`
	Data json.RawMessage `json:"data"`
}

// NewCard marshals data into a card of kind.
func NewCard(kind string, data any) (Card, error) {
	b, err := json.Marshal(data)
	if err != nil {
		return Card{}, fmt.Errorf("tools: card %s: %w", kind, err)
	}
	return Card{Kind: kind, Data: b}, nil
}

// DBWrite describes a write a tool made or, in dry run, proposes.
type DBWrite struct {
	Table     string          `json:"table"`
	Operation string          `json:"operation"`
	Data      json.RawMessage `json:"data"`
	DryRun    bool            `json:"dry_run"`
}

// ToolError is a tool failure the model may read. Code is a short snake_case
// word; Message is one client-safe sentence.
type ToolError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

func (e *ToolError) Error() string { return e.Code + ": " + e.Message }

// Output is e as the model reads it in place of a call's output,
// {"error":{"code":…,"message":…}}: every failed or refused call, voice or
// chat, is answered in this one shape, so a model learns one.
func (e *ToolError) Output() string {
	b, _ := json.Marshal(struct {
		Error *ToolError `json:"error"`
	}{e})
	return string(b)
}

// Refusal is a call the executor refused (unknown tool, not allowed, bad
// arguments) as the ToolError the model reads: the client-safe code and
// message of err, so the model can correct itself and try again.
func Refusal(err error) *ToolError {
	e := apierr.From(err)
	return &ToolError{Code: string(e.Code), Message: e.Message}
}

// Failf returns a ToolError. Tool bodies use it for failures the model
// should hear about ("no recipe with id 7").
func Failf(code, format string, args ...any) *ToolError {
	return &ToolError{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Error codes the executor itself assigns to failed calls.
const (
	ErrCodeTimeout     = "timeout"
	ErrCodePanic       = "internal_error"
	ErrCodeInterrupted = "interrupted"
	ErrCodeFailed      = "tool_failed"
	ErrCodeBadOutput   = "invalid_output"
)

// Spec is a tool as a provider sees it: an OpenAI-style function.
type Spec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// Spec returns the function definition to send to a provider.
func (t *Tool) Spec() Spec {
	return Spec{Name: t.Name, Description: t.Description, Parameters: t.Parameters}
}

// Writes reports whether a call may change something: the tool names
// what it writes to, or its tier asks for a confirmation (DESIGN §7:
// standard is a write, elevated an account operation).
func (t *Tool) Writes() bool { return len(t.WritesTo) > 0 || t.Tier != TierNone }

// Source is "builtin", "webhook", "sql" or "mcp".
func (t *Tool) Source() string { return t.source }

// AllowsPlan reports whether plan may use the tool.
func (t *Tool) AllowsPlan(plan string) bool {
	if len(t.Plans) == 0 {
		return true
	}
	for _, p := range t.Plans {
		if p == plan {
			return true
		}
	}
	return false
}
