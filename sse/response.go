package sse

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/safety"
	"github.com/voxgate/voxgate/tools"
)

// Response is a turn's final answer (DESIGN §7): the done event's
// response, the body of a stream:false request, and what an
// Idempotency-Key replays.
type Response struct {
	Version   string       `json:"version"`
	SessionID string       `json:"session_id"`
	MessageID string       `json:"message_id"`
	Message   string       `json:"message"`
	Language  string       `json:"language"`
	Cards     []tools.Card `json:"cards"`
	// CardsOmitted counts the cards past MaxCards; absent when none were.
	CardsOmitted int             `json:"cards_omitted,omitempty"`
	Suggestions  []Suggestion    `json:"suggestions"`
	Actions      []Action        `json:"actions"`
	DBWrites     []tools.DBWrite `json:"db_writes"`
	SafetyFlags  []safety.Flag   `json:"safety_flags"`
	Degraded     bool            `json:"degraded"`
	Usage        UsageBlock      `json:"usage"`
}

// Suggestion is a follow-up the app may offer as a button.
type Suggestion struct {
	Label   string `json:"label"`
	Message string `json:"message"`
}

// Action is something the app should offer; a pending confirmation is one
// (type "confirm", its call in the payload).
type Action struct {
	Type    string         `json:"type"`
	Label   string         `json:"label"`
	Payload map[string]any `json:"payload"`
}

// UsageBlock is the turn's usage and the user's day (DESIGN §7). "Calls"
// are chat requests, the plan's requests-per-day; a remaining count is
// null when the plan sets no limit.
type UsageBlock struct {
	InputTokens          int64  `json:"input_tokens"`
	OutputTokens         int64  `json:"output_tokens"`
	CostMicros           *int64 `json:"cost_micros"`
	CallsUsedToday       int64  `json:"calls_used_today"`
	CallsRemainingToday  *int64 `json:"calls_remaining_today"`
	TokensUsedToday      int64  `json:"tokens_used_today"`
	TokensRemainingToday *int64 `json:"tokens_remaining_today"`
	Plan                 string `json:"plan"`
}

//go:embed response.schema.json
var responseSchemaDoc []byte

// responseSchema is the compiled response.schema.json.
type responseSchema struct{ s *jsonschema.Schema }

func compileResponseSchema() (*responseSchema, error) {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(responseSchemaDoc))
	if err != nil {
		return nil, fmt.Errorf("sse: response schema: %w", err)
	}
	c := jsonschema.NewCompiler()
	const loc = "voxgate:///sse/response.schema.json"
	if err := c.AddResource(loc, v); err != nil {
		return nil, fmt.Errorf("sse: response schema: %w", err)
	}
	s, err := c.Compile(loc)
	if err != nil {
		return nil, fmt.Errorf("sse: response schema: %w", err)
	}
	return &responseSchema{s}, nil
}

// check validates r as JSON against the schema. What breaks it came from
// the model or a tool, so it is AI_VALIDATION_ERROR, never a crash; the
// cause is logged, not sent.
func (rs *responseSchema) check(r *Response) (raw []byte, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = apierr.Wrap(apierr.AIValidation, "", fmt.Errorf("sse: response validation panicked: %v", p))
		}
	}()
	raw, err = json.Marshal(r)
	if err != nil {
		return nil, apierr.Wrap(apierr.AIValidation, "", err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, apierr.Wrap(apierr.AIValidation, "", err)
	}
	if err := rs.s.Validate(v); err != nil {
		// Only the location is kept: the library's message quotes the
		// offending value, which is model output and must not be logged.
		where := "/"
		var ve *jsonschema.ValidationError
		if errors.As(err, &ve) && len(ve.Causes) > 0 {
			for ve = ve.Causes[0]; len(ve.Causes) > 0; ve = ve.Causes[0] {
			}
			where = "/" + strings.Join(ve.InstanceLocation, "/")
		}
		return nil, apierr.Wrap(apierr.AIValidation, "", fmt.Errorf("sse: final response breaks its schema at %s", where))
	}
	return raw, nil
}

// nonNil makes the response's lists [] rather than null.
func (r *Response) nonNil() {
	if r.Cards == nil {
		r.Cards = []tools.Card{}
	}
	if r.Suggestions == nil {
		r.Suggestions = []Suggestion{}
	}
	if r.Actions == nil {
		r.Actions = []Action{}
	}
	if r.DBWrites == nil {
		r.DBWrites = []tools.DBWrite{}
	}
	if r.SafetyFlags == nil {
		r.SafetyFlags = []safety.Flag{}
	}
}
