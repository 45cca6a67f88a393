package sse

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

// judgeFor is a unit's judge, nil when none is configured.
func (s *Service) judgeFor(ctx context.Context) *judge.Judge {
	if !s.judge.Enabled() {
		return nil
	}
	return judge.New(ctx, s.provider, s.judge)
}

// judged is o with the unit's judge, if it has one. (A nil *judge.Judge
// in the interface would not be a nil Judge.)
func (s *Service) judged(o safety.Options, j *judge.Judge) safety.Options {
	if j != nil {
		o.Judge, o.JudgeBand = j, s.judge.Band
	}
	return o
}

// judgeRecords are the records of a unit's answered questions: kind judge,
// turn "<unit>/judge/<n>", priced by the model that answered as billed.
func judgeRecords(j *judge.Judge, userID, sessionID, unitID string) []attemptRecord {
	if j == nil {
		return nil
	}
	var out []attemptRecord
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
		out = append(out, attemptRecord{
			Record: billing.Record{UserID: userID, SessionID: sessionID, TurnID: fmt.Sprintf("%s/judge/%d", unitID, i+1),
				Kind: billing.KindJudge, Provider: provider, Model: model, UsageSource: billing.SourceProviderReported},
			Usage: billing.Usage{TextIn: u.InputTokens, TextCachedIn: u.CachedInputTokens,
				TextCacheWriteIn: u.CacheWriteInputTokens, TextOut: u.OutputTokens},
		})
	}
	return out
}

// judgeTraces are the judge's answered calls' traces, which follow the
// unit's own calls in its audit row's failover_trace.
func judgeTraces(j *judge.Judge) []llm.Trace {
	if j == nil {
		return nil
	}
	return j.Traces()
}
