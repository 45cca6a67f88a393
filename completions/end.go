package completions

import (
	"context"
	"time"

	"github.com/voxgate/voxgate/billing"
	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/unit"
)

// completionEndKind names a completion's end on the durable path.
const completionEndKind = "completion_end"

// end hands the completion's records, its final audit row and its
// settlement to the durable path, once (unit.Job, unit.Env.Keep): nil
// once they are kept, else UNAVAILABLE, and an answer whose usage is lost
// is not given as a success.
func (c *completion) end(ctx context.Context) error {
	if c.ended {
		return c.lost
	}
	c.ended = true
	j := unit.Job{UserID: c.p.UserID, TicketID: c.ticket.ID, Records: c.records(), Audit: c.auditRow(ctx)}
	c.lost = c.s.env.Keep(ctx, completionEndKind, j, "completions", c.id)
	return c.lost
}

// records are the completion's ledger records: each failed attempt its
// provider may bill (unit.AttemptRecords: kind attempt, turn "<id>/<n>",
// n its place in the trace), then the answer (kind completion), if one
// began.
func (c *completion) records() []unit.Record {
	out := unit.AttemptRecords([]llm.Trace{c.trace}, []int64{llm.EstimateInput(c.llmReq)}, c.p.UserID, c.id, c.id)
	dur := time.Since(c.started).Milliseconds()
	for _, jr := range unit.JudgeRecords(c.judge, c.p.UserID, c.id, c.id) {
		out = append(out, jr)
	}
	if c.usage == nil {
		return out
	}
	provider, model := c.target.Provider, c.target.Model
	if a, ok := c.trace.Answered(); ok {
		provider, model = a.Provider, a.Model
	}
	if provider == "" {
		return out
	}
	return append(out, c.record(billing.KindCompletion, c.id, provider, model, *c.usage, c.estimated, dur))
}

func (c *completion) record(kind, turnID, provider, model string, u llm.Usage, estimated bool, dur int64) unit.Record {
	if u.Model != "" {
		model = u.Model // the provider's own name (a dated snapshot) is what it billed
	}
	source := billing.SourceProviderReported
	if estimated {
		source = billing.SourceServerObserved
	}
	return unit.Record{
		Record: billing.Record{UserID: c.p.UserID, SessionID: c.id, TurnID: turnID, Kind: kind,
			Provider: provider, Model: model, DurationMS: dur, UsageSource: source},
		Usage: billing.FromLLM(u),
	}
}
