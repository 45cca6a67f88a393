package unit

import (
	"context"
	"fmt"

	"github.com/voxgate/voxgate/billing"
	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/safety"
	"github.com/voxgate/voxgate/safety/judge"
)

// The safety filter's optional judge (config safety.judge, docs/safety.md
// "A second opinion"): each chat turn and completion gets its own, over
// the router, when one is configured. Its questions' usage becomes the
// unit's records of kind judge, the operator's cost like a failed
// attempt's, and its calls join the unit's trace in the audit row.

// JudgeFor is a unit's judge, nil when none is configured.
func (e *Env) JudgeFor(ctx context.Context) *judge.Judge {
	if !e.Judge.Enabled() {
		return nil
	}
	return judge.New(ctx, e.Provider, e.Judge)
}

// Judged is o with the unit's judge, if it has one. (A nil *judge.Judge
// in the interface would not be a nil Judge.)
func (e *Env) Judged(o safety.Options, j *judge.Judge) safety.Options {
	if j != nil {
		o.Judge, o.JudgeBand = j, e.Judge.Band
	}
	return o
}

// JudgeRecords are the records of a unit's answered questions: kind judge,
// turn "<unit>/judge/<n>", priced by the model that answered as billed.
func JudgeRecords(j *judge.Judge, userID, sessionID, unitID string) []Record {
	if j == nil {
		return nil
	}
	var out []Record
	traces := j.Traces()
	for i, u := range j.Usage() {
		provider, model := "", u.Model
		if i < len(traces) {
			if a, ok := traces[i].Answered(); ok {
				provider = a.Provider
				if model == "" {
					model = a.Model
				}
			}
		}
		out = append(out, Record{
			Record: billing.Record{UserID: userID, SessionID: sessionID, TurnID: fmt.Sprintf("%s/judge/%d", unitID, i+1),
				Kind: billing.KindJudge, Provider: provider, Model: model, UsageSource: billing.SourceProviderReported},
			Usage: billing.FromLLM(u),
		})
	}
	return out
}

// JudgeTraces are the judge's answered calls' traces, which follow the
// unit's own calls in its audit row's failover_trace.
func JudgeTraces(j *judge.Judge) []llm.Trace {
	if j == nil {
		return nil
	}
	return j.Traces()
}

// Record is a ledger record with its usage, which billing.Record's JSON
// leaves out (the spool keeps the two apart): a failed attempt's, a
// judge's question's, a completion's answer.
type Record struct {
	Record billing.Record `json:"record"`
	Usage  billing.Usage  `json:"usage"`
}

// AttemptRecords are the ledger records of a unit's attempts that failed
// but that their provider may bill (DESIGN §11), kind attempt, turn id
// "<unit>/<n>" with n the attempt's place across the unit's calls: one
// the provider reported usage for, as reported; one cut after commit and
// taken over by a continuation (llm.Attempt.CutAt) with nothing reported,
// estimated from its call's prompt (inputs, in calls' order) and the text
// the caller had from it (usage_source server_observed), since its
// provider billed what it wrote. The attempt that answered is the unit's
// own record, never one of these.
func AttemptRecords(calls []llm.Trace, inputs []int64, userID, sessionID, unitID string) []Record {
	var out []Record
	n := 0
	for i, tr := range calls {
		for _, a := range tr {
			n++
			if a.Answered {
				continue
			}
			var u billing.Usage
			source, model := billing.SourceProviderReported, a.Model
			switch {
			case a.Usage != nil:
				u = billing.FromLLM(*a.Usage)
				if a.Usage.Model != "" {
					model = a.Usage.Model
				}
			case a.CutAt > 0 && i < len(inputs):
				u, source = billing.Usage{TextIn: inputs[i], TextOut: a.CutOutput()}, billing.SourceServerObserved
			default:
				continue
			}
			out = append(out, Record{Usage: u, Record: billing.Record{UserID: userID, SessionID: sessionID,
				TurnID: fmt.Sprintf("%s/%d", unitID, n), Kind: billing.KindAttempt, Provider: a.Provider, Model: model,
				DurationMS: a.Duration.Milliseconds(), UsageSource: source}})
		}
	}
	return out
}
