package sse

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/voxgate/voxgate/audit"
	"github.com/voxgate/voxgate/billing"
	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/spool"
	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/quota"
)

// completionEndKind names a completion's end on the durable path.
const completionEndKind = "completion_end"

// completionEnd is what ends an admitted completion in the database, as
// turnEnd ends a chat turn: its records (the answer's, kind completion,
// and one per failed attempt the provider billed, kind attempt), then the
// final audit row, then the ticket's settlement with their tokens and
// cost. Every step is idempotent (each record's unique key, the ticket's
// settlement row, the audit row's one transition), so the spool may
// replay it.
type completionEnd struct {
	UserID   string      `json:"user_id"`
	TicketID int64       `json:"ticket_id"`
	Records  []endRecord `json:"records,omitempty"`
	// Audit is the final audit row, nil when the completion began none.
	Audit *audit.Row `json:"audit,omitempty"`

	s       *Service
	written []billing.Record // what Complete wrote
}

// endRecord is a record and its usage, which the record's JSON leaves out.
type endRecord struct {
	Record billing.Record `json:"record"`
	Usage  billing.Usage  `json:"usage"`
}

func (j *completionEnd) Key() string { return fmt.Sprintf("ticket:%d", j.TicketID) }

func (j *completionEnd) Complete(ctx context.Context) error {
	e := unitEnd{UserID: j.UserID, TicketID: j.TicketID, Audit: j.Audit, Usage: j.usage}
	for _, er := range j.Records {
		r := er.Record
		r.Usage = er.Usage
		e.Records = append(e.Records, r)
	}
	out, err := j.s.endUnit(ctx, e)
	j.written = out.Records
	return err
}

// usage is the settlement's: every record's tokens, calls and cost but
// the judge's, which are the operator's (judge.go).
func (j *completionEnd) usage(costs []*int64) quota.Usage {
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

// decodeCompletionEnd rebuilds a spooled completionEnd.
func (s *Service) decodeCompletionEnd(raw []byte) (spool.Job, error) {
	j := &completionEnd{s: s}
	if err := json.Unmarshal(raw, j); err != nil {
		return nil, err
	}
	return j, nil
}

// end hands the completion's records and settlement to the durable path,
// once, and says whether they are kept: nil once the database took them
// or the spool holds them, else UNAVAILABLE (the cause logged here), and
// an answer whose usage is lost is not given as a success (docs/chat.md).
// It runs on after the client has gone: what was used was used.
func (c *completion) end(ctx context.Context) error {
	if c.ended {
		return c.lost
	}
	c.ended = true
	j := &completionEnd{UserID: c.p.UserID, TicketID: c.ticket.ID, Records: c.records(), Audit: c.auditRow(ctx), s: c.s}
	spooled, err := c.s.spool.Do(ctx, completionEndKind, j)
	switch {
	case err != nil:
		c.s.log.ErrorContext(ctx, "completions: usage could not be recorded or settled", "id", c.id, "ticket", c.ticket.ID, "err", err)
		c.lost = apierr.New(apierr.Unavailable, "This answer could not be recorded. Please try again.").WithRetry(5)
	case spooled:
		c.s.log.WarnContext(ctx, "completions: the database did not take a completion's end; spooled until it does", "id", c.id, "ticket", c.ticket.ID)
	}
	return c.lost
}

// records are the completion's ledger records: each failed attempt the
// provider reported usage for (kind attempt, turn "<id>/<n>", n its place
// in the trace), then the answer (kind completion), if one began.
func (c *completion) records() []endRecord {
	var out []endRecord
	dur := time.Since(c.started).Milliseconds()
	for i, a := range c.trace {
		if a.Answered || a.Usage == nil {
			continue
		}
		out = append(out, c.record(billing.KindAttempt, c.id+"/"+strconv.Itoa(i+1), a.Provider, a.Model, *a.Usage, false, dur))
	}
	for _, jr := range judgeRecords(c.judge, c.p.UserID, c.id, c.id) {
		out = append(out, endRecord(jr))
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

func (c *completion) record(kind, turnID, provider, model string, u llm.Usage, estimated bool, dur int64) endRecord {
	if u.Model != "" {
		model = u.Model // the provider's own name (a dated snapshot) is what it billed
	}
	source := billing.SourceProviderReported
	if estimated {
		source = billing.SourceServerObserved
	}
	return endRecord{
		Record: billing.Record{UserID: c.p.UserID, SessionID: c.id, TurnID: turnID, Kind: kind,
			Provider: provider, Model: model, DurationMS: dur, UsageSource: source},
		Usage: billing.Usage{TextIn: u.InputTokens, TextCachedIn: u.CachedInputTokens,
			TextCacheWriteIn: u.CacheWriteInputTokens, TextOut: u.OutputTokens},
	}
}
