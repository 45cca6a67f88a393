package quota

import (
	"context"
	"time"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/auth"
	"github.com/voxgate/voxgate/internal/config"
)

// Report is the plan and usage part of GET /v1/me (DESIGN §9).
type Report struct {
	Plan  string                `json:"plan"`
	Usage map[string]LimitUsage `json:"usage"` // keyed by limit name, e.g. requests_per_minute
}

// LimitUsage is one limit's state. Used counts what is committed now:
// settled usage plus the reservations of turns and voice sessions in
// flight, so Used + Remaining = Limit. An unlimited limit has both Limit
// and Remaining nil (JSON null), as DESIGN §9 shows it: config refuses a
// limit of 0, so the wire must not show one either.
type LimitUsage struct {
	Used      int64      `json:"used"`
	Limit     *int64     `json:"limit"`     // null when unlimited
	Remaining *int64     `json:"remaining"` // null when unlimited
	ResetsAt  *time.Time `json:"resets_at"` // null for limits on things in flight
}

// reportSQL reads every counter of a user in one statement, without locks.
// Windows that have ended read as 0, by the admissions' window rule;
// expired leases do not count, and expired voice reservations count as used
// (they will be charged in full).
const reportSQL = `SELECT ` + clockCols + `, r.plan,
	u.minute_count, u.hour_count, u.day_requests, u.day_calls, u.day_tokens, u.day_cost, u.voice_used,
	t.n, t.calls, t.tokens, t.cost, v.n, v.seconds
FROM quota_clock($4) c
CROSS JOIN quota_plan_of($1, $2, $3) r
LEFT JOIN quota_users q ON q.user_id = $1
-- the window rule (quota_roll): no row, or a window that has ended, is 0
CROSS JOIN LATERAL (SELECT (quota_roll(q, c.minute, c.hour, c.day, c.month)).*) u
CROSS JOIN LATERAL (
	SELECT count(*) AS n, coalesce(sum(res_calls), 0)::bigint AS calls,
	       coalesce(sum(res_tokens), 0)::bigint AS tokens, coalesce(sum(res_cost), 0)::bigint AS cost
	FROM quota_tickets WHERE user_id = $1 AND expires_at > c.now) t
CROSS JOIN LATERAL (
	SELECT count(*) FILTER (WHERE expires_at > c.now) AS n,
	       coalesce(sum(reserved_s) FILTER (WHERE month = c.month), 0)::bigint AS seconds
	FROM quota_voice WHERE user_id = $1) v`

// Report is p's plan and the state of every limit of it.
func (s *Service) Report(ctx context.Context, p auth.Principal) (Report, error) {
	if p.UserID == "" {
		return Report{}, apierr.New(apierr.Unauthorized, "")
	}
	var w windows
	var (
		plan                                          string
		minute, hour, day, calls, tokens, cost, voice int64
		leases, resCalls, resTokens, resCost          int64
		voiceActive, voiceReserved                    int64
	)
	err := s.pool.QueryRow(ctx, reportSQL,
		p.UserID, s.fallbackPlan(p), s.plans, s.clockArg(),
	).Scan(append(w.dest(), &plan, &minute, &hour, &day, &calls, &tokens, &cost, &voice,
		&leases, &resCalls, &resTokens, &resCost, &voiceActive, &voiceReserved)...)
	if err != nil {
		return Report{}, dbError("report", err)
	}
	w.utc()
	lim := s.cfg.Plans[plan]
	minuteEnd, hourEnd, dayEnd, monthEnd := w.minuteEnd(), w.hourEnd(), w.dayEnd(), w.monthEnd()
	return Report{Plan: plan, Usage: map[string]LimitUsage{
		ReasonMinute:       usage(minute, lim.RequestsPerMinute, &minuteEnd),
		ReasonHour:         usage(hour, lim.RequestsPerHour, &hourEnd),
		ReasonDay:          usage(day, lim.RequestsPerDay, &dayEnd),
		ReasonTokens:       usage(tokens+resTokens, lim.TokensPerDay, &dayEnd),
		ReasonCost:         usage(cost+resCost, lim.CostPerDayMicros, &dayEnd),
		ReasonCalls:        usage(calls+resCalls, lim.CallsPerDay, &dayEnd),
		ReasonConcurrent:   usage(leases, lim.ConcurrentTurns, nil),
		ReasonVoiceSeconds: usage(voice+voiceReserved, lim.VoiceSecondsPerMonth, &monthEnd),
		ReasonVoiceActive:  usage(voiceActive, lim.VoiceSessions, nil),
	}}, nil
}

func usage(used, limit int64, resets *time.Time) LimitUsage {
	u := LimitUsage{Used: used, ResetsAt: resets}
	if limit != config.Unlimited {
		rem := max(limit-used, 0)
		u.Limit, u.Remaining = &limit, &rem
	}
	return u
}
