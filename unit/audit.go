package unit

import (
	"github.com/voxgate/voxgate/audit"
	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/llm"
)

// FailedStatus is the audit status of a unit that ended with code, or of
// one cut short (cancelled): the code's class.
func FailedStatus(code string) audit.Status {
	return audit.ForCode(apierr.Code(code))
}

// TraceEntries flattens calls' traces into failover_trace entries, each
// numbered by its call (1 is the first).
func TraceEntries(calls []llm.Trace) []audit.TraceEntry {
	out := []audit.TraceEntry{}
	for i, tr := range calls {
		for _, at := range tr {
			out = append(out, audit.TraceEntry{Call: i + 1, Entry: at.String(), Status: at.Status,
				DurationMS: at.Duration.Milliseconds(), CutAt: at.CutAt, Continues: at.Continues})
		}
	}
	return out
}
