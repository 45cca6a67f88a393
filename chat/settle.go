package chat

import (
	"context"
	"encoding/json"
	"time"

	"github.com/voxgate/voxgate/audit"
	"github.com/voxgate/voxgate/billing"
	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/quota"
	"github.com/voxgate/voxgate/unit"
)

// settle finishes a turn persist ended: the response gets its usage block
// (the turn's record and the user's day after settlement) and is kept
// under the request's Idempotency-Key. It returns the response as JSON.
func (t *turn) settle(ctx context.Context, resp *Response, rec billing.Record, d quota.Daily) ([]byte, error) {
	resp.Usage = t.usageBlock(rec, d)
	raw, err := json.Marshal(resp)
	if err != nil {
		return nil, apierr.Wrap(apierr.Internal, "", err)
	}
	if t.key != "" {
		t.s.finishKey(ctx, t.p.UserID, t.key, raw)
	}
	outcome := "ok"
	switch {
	case t.pending:
		outcome = "confirmation"
	case t.degraded:
		outcome = "degraded"
	}
	t.observe(outcome)
	return raw, nil
}

// fail ends a turn that will not answer: the usage so far is recorded and
// settled (nothing used: the ticket is released). It returns err.
func (t *turn) fail(ctx context.Context, err error) error {
	outcome := string(apierr.From(err).Code)
	if ctx.Err() != nil {
		outcome = "cancelled"
	}
	row := t.auditRow(unit.FailedStatus(outcome), outcome, "")
	if t.calls == 0 {
		t.end(ctx, nil, row)
	} else {
		rec := t.record()
		t.end(ctx, &rec, row)
	}
	t.observe(outcome)
	return err
}

func (t *turn) observe(outcome string) {
	t.s.metrics.turns.WithLabelValues(outcome).Inc()
	t.s.metrics.duration.Observe(time.Since(t.started).Seconds())
}

// usageBlock is the response's usage: the turn's tokens and cost, and the
// user's day after it.
func (t *turn) usageBlock(rec billing.Record, d quota.Daily) UsageBlock {
	lim := t.ticket.Limits
	remaining := func(limit, used int64) *int64 {
		if limit <= 0 {
			return nil
		}
		r := max(limit-used, 0)
		return &r
	}
	return UsageBlock{InputTokens: t.usage.TextIn, OutputTokens: t.usage.TextOut, CostMicros: rec.CostMicros,
		CallsUsedToday: d.Requests, CallsRemainingToday: remaining(lim.RequestsPerDay, d.Requests),
		TokensUsedToday: d.Tokens, TokensRemainingToday: remaining(lim.TokensPerDay, d.Tokens), Plan: t.ticket.Plan}
}

// end hands the turn's end to the durable path: write (the record to
// write, nil when the turn used nothing), the attempts a provider billed,
// the final audit row (nil for a turn that never began one), then the
// settlement.
func (t *turn) end(ctx context.Context, write *billing.Record, row *audit.Row) {
	spooled, err := t.s.env.Spool.Do(ctx, turnEndKind, t.endJob(write, row))
	switch {
	case err != nil:
		t.s.env.Log.ErrorContext(ctx, "chat: a turn's usage could not be recorded or settled", "session_id", t.sessionID, "ticket", t.ticket.ID, "err", err)
	case spooled:
		t.s.env.Log.WarnContext(ctx, "chat: the database did not take a turn's end; spooled until it does", "session_id", t.sessionID, "ticket", t.ticket.ID)
	}
}

// endJob is the turn's end: write (nil when the turn used nothing), the
// attempts a provider billed and the judge's records, all under the
// turn's stamp, the final audit row, and the settlement with the turn's
// tokens and calls.
func (t *turn) endJob(write *billing.Record, row *audit.Row) *turnEnd {
	attempts := append(t.attempts(), unit.JudgeRecords(t.judge, t.p.UserID, t.sessionID, t.turnID)...)
	for i := range attempts {
		attempts[i].Record.CreatedAt = t.stamp()
	}
	j := &turnEnd{UserID: t.p.UserID, TicketID: t.ticket.ID, Attempts: attempts, Audit: row, s: t.s}
	if write != nil {
		j.Record, j.Usage = write, write.Usage
		in, out := t.usage.Tokens()
		j.Tokens, j.Calls = in+out, t.calls
	}
	return j
}

// release ends a turn that used nothing: its ticket is freed. It
// returns err.
func (t *turn) release(ctx context.Context, err error) error {
	var row *audit.Row
	if t.began { // its pending row ends with the refusal
		code := string(apierr.From(err).Code)
		row = t.auditRow(unit.FailedStatus(code), code, "")
	}
	t.end(ctx, nil, row)
	return err
}
