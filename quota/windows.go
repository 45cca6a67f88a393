package quota

import (
	"errors"
	"math"
	"strings"
	"time"

	"github.com/voxgate/voxgate/internal/apierr"
)

// windows are the instant a statement worked at and the fixed UTC windows
// that contain it, as quota_clock computed them (migrations/0016): the
// windows are computed in SQL only.
type windows struct {
	now    time.Time
	minute time.Time // start of the current minute
	hour   time.Time
	day    time.Time // 00:00 UTC; also the date of the daily counters
	month  time.Time // the first of the month, 00:00 UTC
}

// clockCols are quota_clock's columns, for a statement that reads
// "FROM quota_clock($n) c" to return; scan them into w.dest().
const clockCols = `c.now, c.minute, c.hour, c.day, c.month`

// clockArg is quota_clock's argument: the test clock's reading, or nil for
// the database's clock, which every replica shares.
func (s *Service) clockArg() *time.Time {
	if s.now == nil {
		return nil
	}
	t := s.now().UTC()
	return &t
}

// dest are scan destinations for clockCols. Call utc after scanning.
func (w *windows) dest() []any { return []any{&w.now, &w.minute, &w.hour, &w.day, &w.month} }

// utc puts every time of w in UTC, as the API reports them.
func (w *windows) utc() {
	for _, t := range []*time.Time{&w.now, &w.minute, &w.hour, &w.day, &w.month} {
		*t = t.UTC()
	}
}

func (w windows) minuteEnd() time.Time { return w.minute.Add(time.Minute) }
func (w windows) hourEnd() time.Time   { return w.hour.Add(time.Hour) }
func (w windows) dayEnd() time.Time    { return w.day.AddDate(0, 0, 1) }
func (w windows) monthEnd() time.Time  { return w.month.AddDate(0, 1, 0) }

// retryAfter is ceil(end − now) in whole seconds, at least 1 (DESIGN §9).
func retryAfter(now, end time.Time) int {
	s := int(math.Ceil(end.Sub(now).Seconds()))
	return max(s, 1)
}

// inflightRetry is the wait suggested when only work in flight (a held
// lease, a reservation) blocks a request: a turn usually ends within
// seconds; the 60 s lease TTL is only the bound for a crashed replica.
const inflightRetry = 5

// Reasons name the limit that refused; they are the metric label and the
// "limit" field of the error, and match the config and /v1/me keys.
const (
	ReasonMinute       = "requests_per_minute"
	ReasonHour         = "requests_per_hour"
	ReasonDay          = "requests_per_day"
	ReasonTokens       = "tokens_per_day"
	ReasonCost         = "cost_per_day_micros"
	ReasonCalls        = "calls_per_day"
	ReasonConcurrent   = "concurrent_turns"
	ReasonVoiceSeconds = "voice_seconds_per_month"
	ReasonVoiceActive  = "voice_sessions"
	ReasonGlobal       = "global_requests_per_minute"
)

// denial turns one reason reported by the SQL functions into its error
// code, limit name and wait.
func (w windows) denial(sqlReason string) (code apierr.Code, reason string, wait int) {
	switch sqlReason {
	case "requests_per_minute":
		return apierr.RateLimited, ReasonMinute, retryAfter(w.now, w.minuteEnd())
	case "requests_per_hour":
		return apierr.RateLimited, ReasonHour, retryAfter(w.now, w.hourEnd())
	case "requests_per_day":
		return apierr.RateLimited, ReasonDay, retryAfter(w.now, w.dayEnd())
	case "tokens_per_day":
		return apierr.QuotaExceeded, ReasonTokens, retryAfter(w.now, w.dayEnd())
	case "cost_per_day":
		return apierr.QuotaExceeded, ReasonCost, retryAfter(w.now, w.dayEnd())
	case "calls_per_day":
		return apierr.QuotaExceeded, ReasonCalls, retryAfter(w.now, w.dayEnd())
	case "tokens_per_day_inflight":
		return apierr.QuotaExceeded, ReasonTokens, inflightRetry
	case "cost_per_day_inflight":
		return apierr.QuotaExceeded, ReasonCost, inflightRetry
	case "calls_per_day_inflight":
		return apierr.QuotaExceeded, ReasonCalls, inflightRetry
	case "concurrent_turns":
		return apierr.ConcurrentLimit, ReasonConcurrent, inflightRetry
	case "voice_sessions":
		return apierr.ConcurrentLimit, ReasonVoiceActive, inflightRetry
	case "voice_seconds_per_month":
		return apierr.QuotaExceeded, ReasonVoiceSeconds, retryAfter(w.now, w.monthEnd())
	case "global_requests_per_minute":
		return apierr.Unavailable, ReasonGlobal, retryAfter(w.now, w.minuteEnd())
	}
	return apierr.Internal, sqlReason, 1
}

// refuse builds the client error for a refusal of a request on plan. Of
// several limits that refuse at once, the one with the longest wait is
// reported: retrying before it ends is pointless. Its message is the
// plan's own for that limit when the config gives one (an app's "you've
// used today's free calls"), else the code's default. A daily quota that
// refuses only for what requests in flight have reserved is not used up:
// it frees when they settle, so it gets neither the plan's "used up"
// words nor the window's reset time.
func (s *Service) refuse(w windows, plan, kind string, sqlReasons []string) *apierr.Error {
	var code apierr.Code
	var reason string
	wait, inflight := -1, false
	for _, r := range sqlReasons {
		c, name, sec := w.denial(r)
		if sec > wait {
			code, reason, wait = c, name, sec
			inflight = strings.HasSuffix(r, "_inflight")
		}
	}
	if wait < 0 {
		return apierr.Wrap(apierr.Internal, "", errors.New("quota: refusal without a reason"))
	}
	s.metrics.denials.WithLabelValues(kind, reason).Inc()
	var msg string
	if !inflight {
		msg = s.cfg.Plans[plan].Messages[reason]
	}
	e := apierr.New(code, msg).WithRetry(wait).With("limit", reason)
	if at, ok := w.resetsAt(reason); ok && !inflight {
		e = e.With("resets_at", at.UTC().Format(time.RFC3339))
	}
	return e
}

// resetsAt is when the window of a limit starts over, for the refusals an
// app shows as "try again at …": the request windows and the daily and
// monthly quotas. Concurrency limits free up when a turn ends, not at a time.
func (w windows) resetsAt(reason string) (time.Time, bool) {
	switch reason {
	case ReasonMinute:
		return w.minuteEnd(), true
	case ReasonHour:
		return w.hourEnd(), true
	case ReasonDay, ReasonTokens, ReasonCost, ReasonCalls:
		return w.dayEnd(), true
	case ReasonVoiceSeconds:
		return w.monthEnd(), true
	}
	return time.Time{}, false
}
