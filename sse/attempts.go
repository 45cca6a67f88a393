package sse

import (
	"fmt"

	"github.com/voxgate/voxgate/billing"
)

// attemptRecord is a failed attempt's ledger record with its usage, which
// billing.Record's JSON leaves out (the spool keeps the two apart).
type attemptRecord struct {
	Record billing.Record `json:"record"`
	Usage  billing.Usage  `json:"usage"`
}

// attempts are the ledger records of the turn's attempts that failed but
// that their provider reported usage for, and may bill (DESIGN §11):
// kind attempt, turn id "<turn>/<n>" with n the attempt's place in the
// turn's whole trace. The attempt that answered is the chat record's,
// never one of these.
func (t *turn) attempts() []attemptRecord {
	var out []attemptRecord
	n := 0
	for _, tr := range t.traces.all() {
		for _, a := range tr {
			n++
			if a.Answered || a.Usage == nil {
				continue
			}
			u := billing.Usage{TextIn: a.Usage.InputTokens, TextCachedIn: a.Usage.CachedInputTokens,
				TextCacheWriteIn: a.Usage.CacheWriteInputTokens, TextOut: a.Usage.OutputTokens}
			model := a.Model
			if a.Usage.Model != "" {
				model = a.Usage.Model
			}
			out = append(out, attemptRecord{Usage: u, Record: billing.Record{UserID: t.p.UserID, SessionID: t.sessionID,
				TurnID: fmt.Sprintf("%s/%d", t.turnID, n), Kind: billing.KindAttempt, Provider: a.Provider, Model: model,
				DurationMS: a.Duration.Milliseconds(), UsageSource: billing.SourceProviderReported}})
		}
	}
	return out
}
