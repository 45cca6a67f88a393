package completions

import (
	"context"
	"time"

	"github.com/voxgate/voxgate/audit"
	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/unit"
)

// completionAudit is what a completion's audit row needs beyond the
// completion itself.
type completionAudit struct {
	began     bool     // the pending row is in
	inputHash string   // the conversation's, as the pending row has it
	failure   error    // what the completion failed with, nil when it answered
	ran       []string // filters that ran on the completion's text, set by its filters
	rules     []string // ids of the filter rules that fired on it (screen.go)
	blocked   bool     // the output filter blocked a medical claim
}

// auditRow is the completion's final audit row, nil when it began none.
// A completion keeps no answer text, so its row has no output hash.
func (c *completion) auditRow(ctx context.Context) *audit.Row {
	if !c.audit.began {
		return nil
	}
	r := &audit.Row{ID: c.id, Kind: audit.KindCompletion, UserID: c.p.UserID, SessionID: c.id, Route: c.req.Model,
		FailoverTrace: unit.TraceEntries(append([]llm.Trace{c.trace}, unit.JudgeTraces(c.judge)...)), FiltersRan: c.audit.ran, RuleIDs: c.audit.rules, InputHash: c.audit.inputHash,
		DurationMS: time.Since(c.started).Milliseconds()}
	if a, ok := c.trace.Answered(); ok {
		r.Provider, r.Model = a.Provider, a.Model
	}
	if c.audit.failure != nil {
		code := string(unit.ClientError(ctx, c.audit.failure).Code)
		if ctx.Err() != nil { // as a chat turn's: cut short, whatever the provider said
			code = "cancelled"
		}
		r.Status, r.ErrorCode = unit.FailedStatus(code), code
		return r
	}
	r.Status = audit.Settle(audit.KindCompletion, audit.Success, c.audit.ran)
	if c.audit.blocked {
		r.Status = audit.MedicalClaimBlocked
	}
	return r
}
