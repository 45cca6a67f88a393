package chat

import (
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/voxgate/voxgate/audit"
	"github.com/voxgate/voxgate/quota"
	"github.com/voxgate/voxgate/unit"
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
		Queue:     func(b *pgx.Batch) { *refused = t.s.env.Audit.QueueBeginIf(b, row, quota.AdmittedSQL) },
		Abandoned: func(b *pgx.Batch) { t.s.env.Audit.QueueAbandoned(b, row.ID) },
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
		FailoverTrace: unit.TraceEntries(append(t.traces.All(), unit.JudgeTraces(t.judge)...)), FiltersRan: t.filtersRan(), RuleIDs: t.rules,
		InputHash: audit.Hash(t.req.Message), OutputHash: audit.Hash(answer),
		DurationMS: time.Since(t.started).Milliseconds()}
}
