package controlplane

import (
	"time"

	"github.com/voxgate/voxgate/billing"
)

// liveStartCharge is what creating a GPT-Live WebRTC session bills while
// it initialises, credited against its duration once it runs: a session
// that never connects still costs this much.
const liveStartCharge = 15 * time.Second

// liveRecord fills a live session's cost record. Its first line is the
// voice time at the Live model's per-minute price: the highest cumulative
// usage.seconds observed, at least the start charge, in milliseconds, and
// also the record's duration_ms, so that the seconds priced are visible
// in the record and the CSV. Its backend line is the delegations' model
// and its text tokens, cached input and cache writes (12-hour ones apart)
// included, at that model's prices and its tier's multiple. One rounding
// for both (billing.Prices.Cost).
func liveRecord(r billing.Record, observed *ReportedUsage) billing.Record {
	var u ReportedUsage
	if observed != nil {
		u = *observed
	}
	billed := max(u.Session.AudioMillis, liveStartCharge.Milliseconds())
	r.Usage, r.DurationMS, r.UsageSource = billing.Usage{AudioMillis: billed}, billed, billing.SourceServerObserved
	if !u.Final {
		r.UsageSource = billing.SourceUnconfirmed // the socket died before session.closed
	}
	r.Transcription, r.TranscriptionModel = billing.Usage{}, ""
	// A live session transcribes for itself: transcription tokens in its
	// usage are backend tokens an older replica saved there.
	if b := u.Backend.Add(u.Transcription); !b.IsZero() && u.BackendModel != "" {
		r.Backend, r.BackendModel = b, u.BackendModel
	}
	return r
}
