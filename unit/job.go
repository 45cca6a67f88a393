package unit

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/voxgate/voxgate/audit"
	"github.com/voxgate/voxgate/billing"
	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/spool"
	"github.com/voxgate/voxgate/quota"
)

// Job is the end of a unit whose conversation the client keeps (a
// completion, a response) on the durable path: its records (the answer's,
// each failed attempt the provider billed, the judge's questions), then
// the final audit row, then the ticket's settlement with their tokens and
// cost (WriteEnd). Every step is idempotent (each record's unique key,
// the ticket's settlement row, the audit row's one transition), so the
// spool may replay it. A chat turn's end carries its messages too and has
// its own job.
type Job struct {
	UserID   string   `json:"user_id"`
	TicketID int64    `json:"ticket_id"`
	Records  []Record `json:"records,omitempty"`
	// Audit is the final audit row, nil when the unit began none.
	Audit *audit.Row `json:"audit,omitempty"`

	env *Env
}

func (j *Job) Key() string { return fmt.Sprintf("ticket:%d", j.TicketID) }

func (j *Job) Complete(ctx context.Context) error {
	e := End{UserID: j.UserID, TicketID: j.TicketID, Audit: j.Audit, Usage: j.usage}
	for _, er := range j.Records {
		r := er.Record
		r.Usage = er.Usage
		e.Records = append(e.Records, r)
	}
	_, err := j.env.WriteEnd(ctx, e)
	return err
}

// usage is the settlement's: every record's tokens, calls and cost but
// the judge's, which are the operator's (judge.go).
func (j *Job) usage(costs []*int64) quota.Usage {
	var u quota.Usage
	for i, er := range j.Records {
		if er.Record.Kind == billing.KindJudge {
			continue
		}
		in, out := er.Usage.Tokens()
		u.Tokens += in + out
		u.Calls++
		if costs[i] != nil {
			u.CostMicros += *costs[i]
		}
	}
	return u
}

// DecodeJob rebuilds a spooled Job: the decoder an endpoint registers for
// its kind.
func (e *Env) DecodeJob(raw []byte) (spool.Job, error) {
	j := &Job{env: e}
	if err := json.Unmarshal(raw, j); err != nil {
		return nil, err
	}
	return j, nil
}

// Keep hands a unit's end to the durable path under kind, once, and says
// whether it is kept: nil once the database took it or the spool holds it
// (the cause logged here), else UNAVAILABLE, and an answer whose usage is
// lost is not given as a success (docs/chat.md). It runs on after the
// client has gone: what was used was used. what and id name the unit in
// the log.
func (e *Env) Keep(ctx context.Context, kind string, j Job, what, id string) error {
	j.env = e
	// Every record's key holds its created_at (billing.Stamp): taken here,
	// before the first try, and kept in the job, so every retry and replay
	// sends the key the first try wrote.
	at := billing.Stamp()
	for i := range j.Records {
		if j.Records[i].Record.CreatedAt.IsZero() {
			j.Records[i].Record.CreatedAt = at
		}
	}
	spooled, err := e.Spool.Do(ctx, kind, &j)
	switch {
	case err != nil:
		e.Log.ErrorContext(ctx, what+": usage could not be recorded or settled", "id", id, "ticket", j.TicketID, "err", err)
		return apierr.New(apierr.Unavailable, "This answer could not be recorded. Please try again.").WithRetry(5)
	case spooled:
		e.Log.WarnContext(ctx, what+": the database did not take a unit's end; spooled until it does", "id", id, "ticket", j.TicketID)
	}
	return nil
}
