package sse

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/voxgate/voxgate/audit"
	"github.com/voxgate/voxgate/billing"
	"github.com/voxgate/voxgate/internal/spool"
	"github.com/voxgate/voxgate/quota"
)

// turnEndKind names a turn's end on the durable path.
const turnEndKind = "chat_turn_end"

// turnEnd is what ends an admitted turn in the database: its cost record
// (unless the turn's own transaction wrote it), the records of failed
// attempts a provider billed, its audit row's final status, and then its
// ticket's settlement, which frees the concurrency lease. It goes through the
// durable path (package spool): a database outage at a turn's end loses
// neither, and the lease is freed as soon as the database answers again.
// Every step is idempotent (the records' unique key, the audit row's one
// transition, the ticket's settlement row), so a replay changes nothing.
type turnEnd struct {
	UserID   string `json:"user_id"`
	TicketID int64  `json:"ticket_id"`
	Tokens   int64  `json:"tokens"`
	Calls    int64  `json:"calls"`
	// Record is the record to write; nil when written already (then
	// CostMicros is its cost) or when the turn used nothing.
	Record     *billing.Record `json:"record,omitempty"`
	Usage      billing.Usage   `json:"usage"` // the Record's, which its JSON leaves out
	CostMicros *int64          `json:"cost_micros,omitempty"`
	// Attempts are the failed attempts a provider billed (audit.go);
	// they are the operator's cost, not the user's: the settlement counts
	// only the turn's own record.
	Attempts []attemptRecord `json:"attempts,omitempty"`
	// Audit is the turn's final audit row, nil when the turn never began
	// one.
	Audit *audit.Row `json:"audit,omitempty"`

	s *Service
	// What Complete wrote and the user's day after it.
	rec   billing.Record
	daily quota.Daily
}

func (j *turnEnd) Key() string { return fmt.Sprintf("ticket:%d", j.TicketID) }

func (j *turnEnd) Complete(ctx context.Context) error {
	cost := j.CostMicros
	if j.Record != nil {
		r := *j.Record
		r.Usage = j.Usage
		rec, err := j.s.ledger.Write(ctx, j.s.pool, r)
		if err != nil {
			return err
		}
		j.rec, cost = rec, rec.CostMicros
	}
	for _, a := range j.Attempts {
		r := a.Record
		r.Usage = a.Usage
		if _, err := j.s.ledger.Write(ctx, j.s.pool, r); err != nil {
			return err
		}
	}
	if j.Audit != nil {
		if err := j.s.audit.Finish(ctx, *j.Audit); err != nil {
			if spool.Retryable(err) {
				return err
			}
			// A row the log refuses (a second final status: a bug) must
			// not keep the lease: the settlement goes on.
			j.s.log.ErrorContext(ctx, "chat: a turn's audit row was refused", "turn_id", j.Audit.ID, "err", err)
		}
	}
	u := quota.Usage{Tokens: j.Tokens, Calls: j.Calls}
	if cost != nil {
		u.CostMicros = *cost
	}
	d, err := j.s.quota.SettleTicket(ctx, j.UserID, j.TicketID, u)
	if err != nil {
		return err
	}
	j.daily = d
	return nil
}

// decodeTurnEnd rebuilds a spooled turnEnd.
func (s *Service) decodeTurnEnd(raw []byte) (spool.Job, error) {
	j := &turnEnd{s: s}
	if err := json.Unmarshal(raw, j); err != nil {
		return nil, err
	}
	return j, nil
}
