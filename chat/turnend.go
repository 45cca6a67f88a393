package chat

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/voxgate/voxgate/audit"
	"github.com/voxgate/voxgate/billing"
	"github.com/voxgate/voxgate/internal/spool"
	"github.com/voxgate/voxgate/quota"
	"github.com/voxgate/voxgate/unit"
)

// turnEndKind names a turn's end on the durable path.
const turnEndKind = "chat_turn_end"

// turnEnd is what ends an admitted turn in the database: its cost record,
// the records of failed attempts a provider billed, its audit row's final
// status, and then its ticket's settlement, which frees the concurrency
// lease. An answered turn's messages go first in the same transaction on
// persist's one try, and never further. Any other end goes through the
// durable path (package spool): a database outage at a turn's end loses
// neither, and the lease is freed as soon as the database answers again.
// Every step is idempotent (the records' unique key, the audit row's one
// transition, the ticket's settlement row), so a replay changes nothing.
type turnEnd struct {
	UserID   string `json:"user_id"`
	TicketID int64  `json:"ticket_id"`
	Tokens   int64  `json:"tokens"`
	Calls    int64  `json:"calls"`
	// Record is the record to write; nil when the turn used nothing, or
	// when written already (then CostMicros is its cost: the jobs of a
	// release whose turns wrote the record with their messages and ended
	// apart, which a spool may still hold).
	Record     *billing.Record `json:"record,omitempty"`
	Usage      billing.Usage   `json:"usage"` // the Record's, which its JSON leaves out
	CostMicros *int64          `json:"cost_micros,omitempty"`
	// Attempts are the failed attempts a provider billed (audit.go);
	// they are the operator's cost, not the user's: the settlement counts
	// only the turn's own record.
	Attempts []unit.Record `json:"attempts,omitempty"`
	// Audit is the turn's final audit row, nil when the turn never began
	// one.
	Audit *audit.Row `json:"audit,omitempty"`

	s *Service
	// first queues the turn's messages on persist's one try (unit.End's
	// First); never spooled.
	first func(b *pgx.Batch) error
	// What Complete wrote and the user's day after it.
	rec   billing.Record
	daily quota.Daily
}

func (j *turnEnd) Key() string { return fmt.Sprintf("ticket:%d", j.TicketID) }

func (j *turnEnd) Complete(ctx context.Context) error {
	e := unit.End{UserID: j.UserID, TicketID: j.TicketID, Audit: j.Audit, Usage: j.usage, First: j.first}
	if j.Record != nil {
		r := *j.Record
		r.Usage = j.Usage
		e.Records = append(e.Records, r)
	}
	for _, a := range j.Attempts {
		r := a.Record
		r.Usage = a.Usage
		e.Records = append(e.Records, r)
	}
	out, err := j.s.env.WriteEnd(ctx, e)
	if err != nil {
		return err
	}
	if j.Record != nil {
		j.rec = out.Records[0]
	}
	j.daily = out.Daily
	return nil
}

// usage is the settlement's: the turn's tokens and calls, and its own
// record's cost (its attempts' are the operator's).
func (j *turnEnd) usage(costs []*int64) quota.Usage {
	u := quota.Usage{Tokens: j.Tokens, Calls: j.Calls}
	cost := j.CostMicros
	if j.Record != nil {
		cost = costs[0]
	}
	if cost != nil {
		u.CostMicros = *cost
	}
	return u
}

// decodeTurnEnd rebuilds a spooled turnEnd.
func (s *Service) decodeTurnEnd(raw []byte) (spool.Job, error) {
	j := &turnEnd{s: s}
	if err := json.Unmarshal(raw, j); err != nil {
		return nil, err
	}
	return j, nil
}
