package chat

import (
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

// Suggestion is a follow-up the app may offer as a button; Category, when
// the configuration gives one, groups the buttons (absent otherwise).
type Suggestion struct {
	Label    string `json:"label"`
	Message  string `json:"message"`
	Category string `json:"category,omitempty"`
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
