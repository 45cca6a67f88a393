package sse

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/voxgate/voxgate/billing"
	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/database"
	"github.com/voxgate/voxgate/quota"
)

// recordTimeout bounds the transaction that stores a finished turn with
// its record, which runs on after the request's context is gone (a client
// that left still used what it used) but not past a shutdown's deadline
// (spool.Detach). What ends the turn in the quota goes through the
// durable path (turnend.go).
const recordTimeout = 10 * time.Second

// run runs the admitted turn to its end and settles its ticket whatever
// happens: an answer, a failure, the client leaving, a shutdown or a
// panic. It returns the final response as JSON.
func (t *turn) run(ctx context.Context) (raw []byte, err error) {
	defer t.s.spool.Hold()() // shutdown waits for the turn's end to be handed over
	stopLease := t.ticket.KeepAlive(ctx)
	defer stopLease()
	defer func() {
		if p := recover(); p != nil {
			err = t.fail(ctx, apierr.Wrap(apierr.Internal, "", fmt.Errorf("sse: turn panicked: %v\n%s", p, debug.Stack())))
		}
	}()
	if err := t.prepare(ctx); err != nil {
		return nil, t.fail(ctx, err)
	}
	if t.confirm != nil {
		if err := t.answerConfirmation(ctx); err != nil {
			return nil, t.fail(ctx, err)
		}
	}
	if err := t.loop(ctx); err != nil {
		return nil, t.fail(ctx, err)
	}
	return t.finish(ctx)
}

// finish validates the final response, stores the turn with its cost
// record, settles the quota and stores the response under the key.
func (t *turn) finish(ctx context.Context) ([]byte, error) {
	resp := &Response{Version: "1.0", SessionID: t.sessionID, MessageID: newID("msg_"), Message: t.text.String(),
		Language: t.language, Cards: t.answer.Cards, CardsOmitted: t.answer.CardsOmitted, Actions: t.answer.Actions, DBWrites: t.answer.DBWrites,
		SafetyFlags: t.answer.SafetyFlags, Usage: UsageBlock{Plan: t.ticket.Plan}}
	resp.nonNil()
	if _, err := t.s.schema.check(resp); err != nil {
		return nil, t.fail(ctx, err)
	}
	wctx, cancel := t.s.spool.Detach(ctx, recordTimeout)
	defer cancel()
	var rec billing.Record
	err := pgx.BeginFunc(wctx, t.s.pool, func(tx pgx.Tx) error {
		err := saveTurn(wctx, tx, storedTurn{sessionID: t.sessionID, userID: t.p.UserID, turnID: t.turnID,
			userText: t.req.Message, userData: messageData{Confirm: t.req.Confirm},
			answerID: resp.MessageID, answer: resp.Message, answerData: t.answer}, t.fresh)
		if err != nil {
			return err
		}
		rec, err = t.s.ledger.Write(wctx, tx, t.record())
		return err
	})
	if err != nil {
		return nil, t.fail(ctx, database.Error("sse: store the turn", err))
	}
	rec, d := t.end(ctx, nil, &rec)
	resp.Usage = t.usageBlock(rec, d)
	raw, err := json.Marshal(resp)
	if err != nil {
		return nil, apierr.Wrap(apierr.Internal, "", err)
	}
	if t.key != "" {
		if err := t.s.finishKey(wctx, t.p.UserID, t.key, raw); err != nil {
			t.s.log.WarnContext(ctx, "chat: could not store the idempotent response", "err", err)
		}
	}
	outcome := "ok"
	if t.pending {
		outcome = "confirmation"
	}
	t.observe(outcome)
	return raw, nil
}

// fail ends a turn that will not answer: the usage so far is recorded and
// settled (nothing used: the ticket is released). It returns err.
func (t *turn) fail(ctx context.Context, err error) error {
	if t.calls == 0 {
		t.release(ctx)
	} else {
		rec := t.record()
		t.end(ctx, &rec, nil)
	}
	outcome := string(apierr.From(err).Code)
	if ctx.Err() != nil {
		outcome = "cancelled"
	}
	t.observe(outcome)
	return err
}

func (t *turn) observe(outcome string) {
	t.s.metrics.turns.WithLabelValues(outcome).Inc()
	t.s.metrics.duration.Observe(time.Since(t.started).Seconds())
}

// record is the turn's cost record (priced by the ledger).
func (t *turn) record() billing.Record {
	model := t.model
	if model == "" {
		model = t.s.cfg.Model
	}
	source := billing.SourceProviderReported
	if t.estimated {
		source = billing.SourceServerObserved
	}
	return billing.Record{UserID: t.p.UserID, SessionID: t.sessionID, TurnID: t.turnID, Kind: billing.KindChat,
		Provider: t.s.provider.Name(), Model: model, Usage: t.usage,
		DurationMS: time.Since(t.started).Milliseconds(), UsageSource: source}
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
