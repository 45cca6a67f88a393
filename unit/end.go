package unit

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/voxgate/voxgate/audit"
	"github.com/voxgate/voxgate/billing"
	"github.com/voxgate/voxgate/internal/database"
	"github.com/voxgate/voxgate/internal/spool"
	"github.com/voxgate/voxgate/quota"
)

// End is what ends an admitted chat turn or completion in the database:
// its records, its final audit row, and its ticket's settlement, which
// frees the concurrency lease.
type End struct {
	UserID   string
	TicketID int64
	Records  []billing.Record
	Audit    *audit.Row // nil when the unit began none
	// Usage is the settlement's usage, given the records' costs as priced
	// now (billing.Queued.Cost), in Records' order.
	Usage func(costs []*int64) quota.Usage
	// First, when set, queues what the unit stores besides its end (a
	// chat turn's messages), first in the end's batch, so that it commits
	// with the records or not at all. It is never spooled: the caller
	// sets it on its own first try only.
	First func(b *pgx.Batch) error
}

// Ended is what ending a unit wrote and the user's day after it.
type Ended struct {
	Records []billing.Record
	Daily   quota.Daily
}

// WriteEnd writes e as one batch: one round trip and one transaction (pgx
// sends a batch as an implicit transaction), so a replay from the spool
// finds all of it or none. Should PostgreSQL refuse one of its statements
// for a reason a retry cannot cure (a bug), the transaction is undone
// whole; the end is then written statement by statement, as each step's
// own idempotency allows, so that an audit row refused does not cost the
// records or the settlement.
func (env *Env) WriteEnd(ctx context.Context, e End) (out Ended, err error) {
	ctx, span := tracer.Start(ctx, "settle")
	defer func() { traceEnd(span, e, out, err) }()
	out, err = env.writeEnd(ctx, e, true)
	if err == nil || spool.Retryable(err) {
		return out, err
	}
	env.Log.ErrorContext(ctx, "chat: a unit's end was refused as one transaction; writing it step by step", "ticket", e.TicketID, "err", err)
	return env.writeEnd(ctx, e, false)
}

// writeEnd queues e's statements and sends them together, or each on its
// own when together is false.
func (env *Env) writeEnd(ctx context.Context, e End, together bool) (Ended, error) {
	var b pgx.Batch
	send := func() error {
		if b.Len() == 0 {
			return nil
		}
		err := env.Pool.SendBatch(ctx, &b).Close()
		b = pgx.Batch{}
		return database.Error("chat: end a unit", err)
	}
	step := func() error {
		if together {
			return nil
		}
		return send()
	}
	if e.First != nil {
		if err := e.First(&b); err != nil {
			return Ended{}, err
		}
		if err := step(); err != nil {
			return Ended{}, err
		}
	}
	queued := make([]*billing.Queued, 0, len(e.Records))
	costs := make([]*int64, 0, len(e.Records))
	for _, r := range e.Records {
		q, err := env.Ledger.QueueWrite(ctx, &b, r)
		if err != nil {
			return Ended{}, err
		}
		queued, costs = append(queued, q), append(costs, q.Cost())
		if err := step(); err != nil {
			return Ended{}, err
		}
	}
	var fin *audit.Finishing
	var auditErr error
	if e.Audit != nil {
		if fin, auditErr = env.Audit.QueueFinish(&b, *e.Audit); auditErr == nil {
			auditErr = step()
		}
		if spool.Retryable(auditErr) {
			return Ended{}, auditErr
		}
	}
	st, err := env.Quota.QueueSettle(&b, e.UserID, e.TicketID, e.Usage(costs))
	if err != nil {
		return Ended{}, err
	}
	if err := send(); err != nil {
		return Ended{}, err
	}
	var out Ended
	for _, q := range queued {
		rec, err := q.Record(ctx, env.Pool)
		if err != nil {
			return Ended{}, err
		}
		out.Records = append(out.Records, rec)
	}
	if fin != nil && auditErr == nil {
		auditErr = fin.Err(ctx)
	}
	if auditErr != nil {
		if spool.Retryable(auditErr) {
			return Ended{}, auditErr
		}
		// A row the log refuses (a second final status: a bug) must not
		// keep the lease: the settlement stands.
		env.Log.ErrorContext(ctx, "chat: a unit's audit row was refused", "id", e.Audit.ID, "err", auditErr)
	}
	out.Daily, err = st.Daily(ctx)
	return out, err
}
