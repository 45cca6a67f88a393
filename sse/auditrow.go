package sse

import (
	"context"
	"encoding/json"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/voxgate/voxgate/audit"
	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/auth"
	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/quota"
)

// flagMedicalClaim is DESIGN §7's safety flag for a medical claim the
// output filter blocked.
const flagMedicalClaim = "medical_claim"

// filtersRan is what the turn's audit row says ran on its text: only what
// did (audit.Required lists what success needs).
func (t *turn) filtersRan() []string { return t.ran }

// auditRider is the turn's pending audit row as a rider of its admission
// (quota.Rider, docs/quota.md "Riders"): inserted in the admission's round
// trip and transaction, only if it admits, once the session is known and
// before any model call, so a crash leaves it pending. What the row's
// check refuses is kept in *refused for admit.
func (t *turn) auditRider(refused *error) quota.Rider {
	row := audit.Row{ID: t.turnID, Kind: audit.KindChat, UserID: t.p.UserID,
		SessionID: t.sessionID, Route: t.s.cfg.Route, InputHash: audit.Hash(t.req.Message)}
	return quota.Rider{
		Queue:     func(b *pgx.Batch) { *refused = t.s.audit.QueueBeginIf(b, row, quota.AdmittedSQL) },
		Abandoned: func(b *pgx.Batch) { t.s.audit.QueueAbandoned(b, row.ID) },
	}
}

// answeredStatus is the final status of a turn that answered (a
// confirmation it stopped for included): a medical claim the output
// filter blocked, the router's fallback, or success when every required
// filter ran (audit.Settle).
func (t *turn) answeredStatus(resp *Response) audit.Status {
	for _, f := range resp.SafetyFlags {
		if f.Type == flagMedicalClaim && f.Blocked {
			return audit.MedicalClaimBlocked
		}
	}
	if t.degraded {
		return audit.Degraded
	}
	return audit.Settle(audit.KindChat, audit.Success, t.filtersRan())
}

// auditRow is the turn's final audit row: its status, the code it failed
// with ("" when it answered), the hash of its answer ("" when none) and
// where its model calls went.
func (t *turn) auditRow(status audit.Status, code, answer string) *audit.Row {
	return &audit.Row{ID: t.turnID, Kind: audit.KindChat, UserID: t.p.UserID, SessionID: t.sessionID,
		Route: t.s.cfg.Route, Provider: t.provider, Model: t.answerModel, Status: status, ErrorCode: code,
		FailoverTrace: traceEntries(append(t.traces.all(), judgeTraces(t.judge)...)), FiltersRan: t.filtersRan(), RuleIDs: t.rules,
		InputHash: audit.Hash(t.req.Message), OutputHash: audit.Hash(answer),
		DurationMS: time.Since(t.started).Milliseconds()}
}

// failedStatus is the audit status of a unit that ended with code, or of
// one cut short (cancelled): the code's class.
func failedStatus(code string) audit.Status {
	return audit.ForCode(apierr.Code(code))
}

// traceEntries flattens calls' traces into failover_trace entries, each
// numbered by its call (1 is the first).
func traceEntries(calls []llm.Trace) []audit.TraceEntry {
	out := []audit.TraceEntry{}
	for i, tr := range calls {
		for _, at := range tr {
			out = append(out, audit.TraceEntry{Call: i + 1, Entry: at.String(), Status: at.Status,
				DurationMS: at.Duration.Milliseconds()})
		}
	}
	return out
}

// completionAudit is what a completion's audit row needs beyond the
// completion itself.
type completionAudit struct {
	began     bool     // the pending row is in
	inputHash string   // the conversation's, as the pending row has it
	failure   error    // what the completion failed with, nil when it answered
	ran       []string // filters that ran on the completion's text, set by its filters
	rules     []string // ids of the filter rules that fired on it (completion_screen.go)
	blocked   bool     // the output filter blocked a medical claim
}

// auditRider is the completion's pending audit row as a rider of its
// admission (quota.Rider, docs/quota.md "Riders"): inserted in the
// admission's round trip and transaction, only if it admits. What the
// row's check refuses is kept in *refused for the caller, which fails the
// completion as a Begin that failed did. Its input hash is the hash of the
// conversation it sends, computed once for both of the unit's rows.
func (s *Service) auditRider(id string, p auth.Principal, route string, lreq llm.Request, refused *error) (quota.Rider, string) {
	raw, _ := json.Marshal(lreq.Messages)
	hash := audit.Hash(string(raw))
	row := audit.Row{ID: id, Kind: audit.KindCompletion, UserID: p.UserID, SessionID: id, Route: route, InputHash: hash}
	return quota.Rider{
		Queue:     func(b *pgx.Batch) { *refused = s.audit.QueueBeginIf(b, row, quota.AdmittedSQL) },
		Abandoned: func(b *pgx.Batch) { s.audit.QueueAbandoned(b, id) },
	}, hash
}

// auditRow is the completion's final audit row, nil when it began none.
// A completion keeps no answer text, so its row has no output hash.
func (c *completion) auditRow(ctx context.Context) *audit.Row {
	if !c.audit.began {
		return nil
	}
	r := &audit.Row{ID: c.id, Kind: audit.KindCompletion, UserID: c.p.UserID, SessionID: c.id, Route: c.req.Model,
		FailoverTrace: traceEntries(append([]llm.Trace{c.trace}, judgeTraces(c.judge)...)), FiltersRan: c.audit.ran, RuleIDs: c.audit.rules, InputHash: c.audit.inputHash,
		DurationMS: time.Since(c.started).Milliseconds()}
	if a, ok := c.trace.Answered(); ok {
		r.Provider, r.Model = a.Provider, a.Model
	}
	if c.audit.failure != nil {
		code := string(completionError(ctx, c.audit.failure).Code)
		if ctx.Err() != nil { // as a chat turn's: cut short, whatever the provider said
			code = "cancelled"
		}
		r.Status, r.ErrorCode = failedStatus(code), code
		return r
	}
	r.Status = audit.Settle(audit.KindCompletion, audit.Success, c.audit.ran)
	if c.audit.blocked {
		r.Status = audit.MedicalClaimBlocked
	}
	return r
}
