// Package audit is the AI audit log of DESIGN §12: one row per chat turn,
// completion request, voice tool call and live delegation. A unit in
// flight is a pending row of ai_audit_pending, from its start; at its end
// that row becomes its one final row of ai_audit_log, which is
// append-only (docs/audit.md). A row holds where the model calls went (provider, model,
// failover trace), which filters ran on the unit's text and which of
// their rules fired, and SHA-256 hashes of the text in and out: never the
// text. Admins read it (GET /v1/admin/audit); users never see it.
//
// The package knows neither chat nor voice: packages chat, completions and
// controlplane each describe their unit as a Row.
package audit

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/voxgate/voxgate/internal/apierr"
)

// Kind is the unit of work a row audits.
type Kind string

// The kinds of DESIGN §12.
const (
	KindChat           Kind = "chat"            // a POST /v1/chat turn
	KindCompletion     Kind = "completion"      // a POST /v1/chat/completions request
	KindVoiceTool      Kind = "voice_tool"      // a voice session's tool call
	KindLiveDelegation Kind = "live_delegation" // a GPT-Live delegation
	// KindVoiceAnswer is a spoken voice answer the output detectors hit
	// after the fact (DESIGN §12: audio cannot be recalled). Only a hit
	// makes a row; its status is Flagged.
	KindVoiceAnswer Kind = "voice_answer"
)

// Kinds lists every kind, for validation and the admin filter.
var Kinds = []Kind{KindChat, KindCompletion, KindVoiceTool, KindLiveDelegation, KindVoiceAnswer}

// Status is where a row is: pending, or one final status.
type Status string

// The statuses of DESIGN §12.
const (
	Pending Status = "pending"
	// Success: the unit answered and every filter its kind requires ran.
	Success Status = "success"
	// Degraded: the unit answered, but not with every guarantee: the
	// router's fallback answered, a required filter did not run
	// (filters_ran says which did), or a tool failed and the model read
	// its error.
	Degraded Status = "degraded"
	// Refused: the unit gave no answer: the provider refused or failed,
	// a tool call was not allowed, or the turn was cut (error_code says
	// which).
	Refused         Status = "refused"
	ParseError      Status = "parse_error"
	ValidationError Status = "validation_error"
	// PIILeak and MedicalClaimBlocked are set by the output filters
	// (package safety, through the chat turn).
	PIILeak             Status = "pii_leak"
	MedicalClaimBlocked Status = "medical_claim_blocked"
	// Flagged: a voice answer was already spoken when the medical-claim
	// or PII detectors hit it, so nothing could be blocked; rule_ids say
	// which rules fired. DESIGN §12's list has no status for this, and
	// "blocked" or "pii_leak" (a rejected turn) would misstate it.
	Flagged Status = "flagged"
)

// Finals lists the final statuses.
var Finals = []Status{Success, Degraded, Refused, ParseError, ValidationError, PIILeak, MedicalClaimBlocked, Flagged}

// The filters a row can say ran.
const (
	// FilterInput: the user's text was sanitized and its length checked
	// (DESIGN §7, §12).
	FilterInput = "input"
	// FilterMedical, FilterPrescriptive and FilterPII: the output filters
	// of DESIGN §12 ran on the answer.
	FilterMedical      = "medical"
	FilterPrescriptive = "prescriptive"
	FilterPII          = "pii"
	// FilterArguments: a tool call's arguments were checked against the
	// tool's JSON Schema (the executor, before the tool runs).
	FilterArguments = "arguments"
	// FilterRanges: the numeric ranges of DESIGN §12 were checked on the
	// measures the tool declares (the executor, before the tool runs).
	FilterRanges = "ranges"
)

// Required is the one list of the filters a row of kind must show in
// filters_ran to say success; migration 0077's CHECK holds the same
// lists, and a test keeps the two in step. A voice tool call carries no
// user text and no answer of the model's: what guards it is its
// arguments' schema and the write guards, both run by the executor.
func Required(k Kind) []string {
	switch k {
	case KindVoiceTool:
		return []string{FilterArguments, FilterRanges}
	case KindVoiceAnswer:
		return []string{FilterMedical, FilterPII}
	}
	return []string{FilterInput, FilterMedical, FilterPrescriptive, FilterPII}
}

// Missing is the filters of Required(k) that ran does not hold.
func Missing(k Kind, ran []string) []string {
	var out []string
	for _, f := range Required(k) {
		if !slices.Contains(ran, f) {
			out = append(out, f)
		}
	}
	return out
}

// Settle is the final status of a unit that would be success when every
// required filter ran: a unit whose filters did not all run answered
// without every guarantee, so it is degraded. Any other status stands.
func Settle(k Kind, want Status, ran []string) Status {
	if want == Success && len(Missing(k, ran)) > 0 {
		return Degraded
	}
	return want
}

// ForCode is the final status of a unit that ended with a DESIGN §5
// code, or was cut short ("cancelled"): the code's class. Its error_code
// keeps the code itself.
func ForCode(code apierr.Code) Status {
	switch code {
	case apierr.InvalidRequest, apierr.Validation, apierr.ToolValidation, apierr.AIValidation:
		return ValidationError
	case apierr.AIParseError:
		return ParseError
	case apierr.AIPIILeak:
		return PIILeak
	}
	return Refused
}

// TraceEntry is one attempt of a unit's failover_trace (DESIGN §11): the
// model call it belongs to (1 is the first), the entry
// "<provider>/<model>:<outcome>", the provider's HTTP status (0 when
// none) and how long the attempt took. It never holds provider text.
type TraceEntry struct {
	Call       int    `json:"call"`
	Entry      string `json:"entry"`
	Status     int    `json:"status"`
	DurationMS int64  `json:"duration_ms"`
	// CutAt is, for an attempt cut after commit, the bytes of the answer
	// the caller had from it: where the next entry, a continuation
	// (Continues), took over (docs/llm.md, "Continuation").
	CutAt     int  `json:"cut_at,omitempty"`
	Continues bool `json:"continues,omitempty"`
}

// Row is one audit row. ID is the unit's id: a turn's or completion's id,
// or "<session_id>/<call_id>" for a voice tool call (VoiceToolID).
type Row struct {
	ID        string `json:"turn_id"`
	Kind      Kind   `json:"kind"`
	UserID    string `json:"user_id"`
	SessionID string `json:"session_id"`
	CallID    string `json:"call_id,omitempty"`
	Tool      string `json:"tool,omitempty"`
	Route     string `json:"route"`
	// Provider and Model answered the unit's last answered call; empty
	// when no target answered (or the unit made no model call).
	Provider      string       `json:"provider"`
	Model         string       `json:"model"`
	Status        Status       `json:"status"`
	ErrorCode     string       `json:"error_code,omitempty"`
	FailoverTrace []TraceEntry `json:"failover_trace"`
	FiltersRan    []string     `json:"filters_ran"`
	RuleIDs       []string     `json:"rule_ids"`
	InputHash     string       `json:"input_hash,omitempty"`
	OutputHash    string       `json:"output_hash,omitempty"`
	DurationMS    int64        `json:"duration_ms"`
	CreatedAt     time.Time    `json:"created_at,omitzero"`
	FinishedAt    *time.Time   `json:"finished_at,omitempty"`
}

// VoiceToolID is the row id of a voice session's tool call: call ids are
// the provider's, unique only within their session.
func VoiceToolID(sessionID, callID string) string { return sessionID + "/" + callID }

// Hash is the SHA-256 of text, in hex: what a row keeps of the text in
// and out, so an operator can match a row to a text they hold without
// the log holding it. Empty text hashes to "".
func Hash(text string) string {
	if text == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:])
}

// ErrFinal is a second, different final status for a row that already
// has one: the first stands.
var ErrFinal = errors.New("audit: the row already has a final status")

// check refuses a row that cannot be stored as asked: an unknown kind or
// status, or success with a required filter missing. The database's
// CHECK constraints say the same; this says it first, with a reason.
func (r *Row) check() error {
	if r.ID == "" || r.UserID == "" {
		return apierr.Wrap(apierr.Internal, "", errors.New("audit: a row needs an id and a user"))
	}
	if !slices.Contains(Kinds, r.Kind) {
		return apierr.Wrap(apierr.Internal, "", errors.New("audit: unknown kind "+string(r.Kind)))
	}
	if r.Status != Pending && !slices.Contains(Finals, r.Status) {
		return apierr.Wrap(apierr.Internal, "", errors.New("audit: unknown status "+string(r.Status)))
	}
	if m := Missing(r.Kind, r.FiltersRan); r.Status == Success && len(m) > 0 {
		return apierr.Wrap(apierr.Internal, "", errors.New("audit: success refused: filters did not run: "+strings.Join(m, ", ")))
	}
	return nil
}
