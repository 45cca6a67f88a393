package responses

import (
	"context"
	"time"

	"github.com/voxgate/voxgate/audit"
	"github.com/voxgate/voxgate/billing"
	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/unit"
)

// end hands the response's records, its final audit row and its
// settlement to the durable path, once (unit.Job, unit.Env.Keep): nil
// once they are kept, else UNAVAILABLE, and an answer whose usage is lost
// is not given as a success.
func (x *exchange) end(ctx context.Context) error {
	if x.ended {
		return x.lost
	}
	x.ended = true
	j := unit.Job{UserID: x.p.UserID, TicketID: x.ticket.ID, Records: x.records(), Audit: x.auditRow(ctx)}
	x.lost = x.s.env.Keep(ctx, endKind, j, "responses", x.resp.ID)
	return x.lost
}

// records are the ledger records: failed billed attempts, the judge's
// questions, then the answer (kind response), if one began.
func (x *exchange) records() []unit.Record {
	id := x.resp.ID
	out := unit.AttemptRecords([]llm.Trace{x.trace}, []int64{llm.EstimateInput(x.llmReq)}, x.p.UserID, id, id)
	out = append(out, unit.JudgeRecords(x.judge, x.p.UserID, id, id)...)
	if x.usage == nil {
		return out
	}
	provider, model := x.target.Provider, x.target.Model
	if a, ok := x.trace.Answered(); ok {
		provider, model = a.Provider, a.Model
	}
	if provider == "" {
		return out
	}
	u := *x.usage
	if u.Model != "" {
		model = u.Model // the provider's own name is what it billed
	}
	source := billing.SourceProviderReported
	if x.estimated {
		source = billing.SourceServerObserved
	}
	return append(out, unit.Record{
		Record: billing.Record{UserID: x.p.UserID, SessionID: id, TurnID: id, Kind: billing.KindResponse,
			Provider: provider, Model: model, DurationMS: time.Since(x.started).Milliseconds(), UsageSource: source},
		Usage: billing.FromLLM(u),
	})
}

// auditState is what the audit row needs beyond the exchange itself.
type auditState struct {
	began     bool
	inputHash string
	failure   error
	ran       []string
	rules     []string
	blocked   bool
}

// A response's audit rows are of kind completion (unit.Env.AuditRider):
// the audit kinds are a closed list checked in the database
// (docs/chat.md).

// auditRow is the final audit row, nil when the exchange began none.
func (x *exchange) auditRow(ctx context.Context) *audit.Row {
	if !x.audit.began {
		return nil
	}
	r := &audit.Row{ID: x.resp.ID, Kind: audit.KindCompletion, UserID: x.p.UserID, SessionID: x.resp.ID, Route: x.req.Model,
		FailoverTrace: unit.TraceEntries(append([]llm.Trace{x.trace}, unit.JudgeTraces(x.judge)...)), FiltersRan: x.audit.ran,
		RuleIDs: x.audit.rules, InputHash: x.audit.inputHash, DurationMS: time.Since(x.started).Milliseconds()}
	if a, ok := x.trace.Answered(); ok {
		r.Provider, r.Model = a.Provider, a.Model
	}
	if x.audit.failure != nil {
		code := string(unit.ClientError(ctx, x.audit.failure).Code)
		if ctx.Err() != nil {
			code = "cancelled"
		}
		r.Status, r.ErrorCode = unit.FailedStatus(code), code
		return r
	}
	r.Status = audit.Settle(audit.KindCompletion, audit.Success, x.audit.ran)
	if x.audit.blocked {
		r.Status = audit.MedicalClaimBlocked
	}
	return r
}
