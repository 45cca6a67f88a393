package quota

import (
	"context"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/auth"
)

// VoiceQuota is the "quota" block of a voice start (DESIGN §6). Seconds
// reserved by active sessions count as used: they are not available.
type VoiceQuota struct {
	SecondsUsed      int64     `json:"seconds_used"`
	SecondsLimit     int64     `json:"seconds_limit"`     // 0: unlimited
	SecondsRemaining *int64    `json:"seconds_remaining"` // null when unlimited
	ResetsAt         time.Time `json:"resets_at"`
}

// VoiceReservation is a started voice session's hold on the month.
type VoiceReservation struct {
	SessionID string
	UserID    string
	Plan      string
	Seconds   int64     // granted: the session's max_duration_s
	ExpiresAt time.Time // after this, an unended session is charged in full
	Quota     VoiceQuota
}

// VoiceSettlement is what ending a voice session charged. Seconds of a
// session that crossed into a new month are charged to the new month from
// the 1st, 00:00 UTC on; the earlier ones belong to a month that is over.
type VoiceSettlement struct {
	Reserved int64
	Charged  int64 // min(used, reserved); the whole reservation when Reclaimed
	Released int64 // Reserved − Charged, back to the month
	// MonthUsed is the user's settled seconds this month, after this charge.
	MonthUsed int64
	// Replayed: an earlier end already charged the session (this is a
	// retry, say after a lost reply); the figures are that end's, and
	// nothing changed.
	Replayed bool
	// Reclaimed: the reservation expired unended and was charged in full
	// (the sweeper's end_reason "expired"); nothing changed.
	Reclaimed bool
}

const voiceReserveSQL = `SELECT ` + clockCols + `, r.plan, r.reasons, r.active_session, r.granted,
	r.voice_used, r.voice_reserved, r.expires_at, r.reserved_session, r.ticket_gen
FROM quota_clock($4) c, LATERAL quota_voice_reserve($1, $2, $3, c.now, c.minute, c.hour, c.day, c.month,
	$5, $10::text, $6, $7, $8, $9) r`

// ReserveVoice starts voice session sessionID for p in one round trip. The
// start counts as one request against the request windows (DESIGN §9), so
// POST /v1/voice/sessions calls ReserveVoice instead of Admit. It reserves
// min(remaining month, plan max_session_s) seconds and refuses with
// QUOTA_EXCEEDED below MinVoiceS, or with an *ActiveSessionError
// (CONCURRENT_LIMIT naming the active session_id) when the plan's
// voice_sessions are all in use, whatever else refuses too.
func (s *Service) ReserveVoice(ctx context.Context, p auth.Principal, sessionID string) (*VoiceReservation, error) {
	return s.ReserveVoiceKeyed(ctx, p, sessionID, "")
}

// ReserveVoiceKeyed is ReserveVoice keyed by key, the start's
// Idempotency-Key ("" for none), as Admit is by Estimate.Key (key.go): a
// retry of a start whose reservation committed but whose reply was lost
// gets that reservation, counted once, and its SessionID is the first
// attempt's, not sessionID: the start goes on as that session. While
// another attempt holds the key's reservation, it is CONFLICT wrapping
// ErrKeyInUse.
func (s *Service) ReserveVoiceKeyed(ctx context.Context, p auth.Principal, sessionID, key string) (*VoiceReservation, error) {
	if key != "" {
		if err := CheckKey(key); err != nil {
			return nil, err
		}
	}
	if p.UserID == "" {
		return nil, apierr.New(apierr.Unauthorized, "")
	}
	if err := checkUserID(p.UserID); err != nil {
		return nil, err
	}
	if sessionID == "" {
		return nil, apierr.New(apierr.Internal, "")
	}
	start := time.Now()
	var w windows
	r := &VoiceReservation{SessionID: sessionID, UserID: p.UserID}
	var reasons []string
	var active *string
	var reserved int64
	var expires *time.Time
	var session *string
	var gen *int32
	err := s.pool.QueryRow(ctx, voiceReserveSQL,
		p.UserID, s.fallbackPlan(p), s.plans, s.clockArg(),
		sessionID, int64(MinVoiceS), int64(noCapVoiceS), int64(voiceGraceS), s.cfg.GlobalRequestsPerMinute, key,
	).Scan(append(w.dest(), &r.Plan, &reasons, &active, &r.Seconds, &r.Quota.SecondsUsed, &reserved, &expires, &session, &gen)...)
	s.metrics.latency.WithLabelValues("voice").Observe(time.Since(start).Seconds())
	if err != nil {
		s.metrics.admissions.WithLabelValues("voice", "error").Inc()
		return nil, dbError("reserve voice", err)
	}
	w.utc()
	if len(reasons) == 1 && reasons[0] == reasonKeyInUse {
		s.metrics.admissions.WithLabelValues("voice", "denied").Inc()
		return nil, errKeyInUse()
	}
	if len(reasons) > 0 || expires == nil {
		s.metrics.admissions.WithLabelValues("voice", "denied").Inc()
		// An active session is the answer the caller can act on (end it, or
		// start with replace), so it wins over any other refusal.
		if active != nil && slices.Contains(reasons, "voice_sessions") {
			e := s.refuse(w, r.Plan, "voice", []string{"voice_sessions"}).With("session_id", *active)
			return nil, &ActiveSessionError{SessionID: *active, Err: e}
		}
		return nil, s.refuse(w, r.Plan, "voice", reasons)
	}
	if session != nil {
		r.SessionID = *session
	}
	if key != "" {
		if err := s.takeVoice(ctx, r, gen); err != nil {
			s.metrics.admissions.WithLabelValues("voice", "error").Inc()
			return nil, err
		}
	}
	s.metrics.admissions.WithLabelValues("voice", "admitted").Inc()
	r.ExpiresAt = expires.UTC()
	r.Quota = s.voiceQuota(w, r.Plan, r.Quota.SecondsUsed, reserved)
	return r, nil
}

// voiceQuota reports settled plus reserved seconds as used.
func (s *Service) voiceQuota(w windows, plan string, settled, reserved int64) VoiceQuota {
	q := VoiceQuota{
		SecondsUsed:  settled + reserved,
		SecondsLimit: s.cfg.Plans[plan].VoiceSecondsPerMonth,
		ResetsAt:     w.monthEnd(),
	}
	if q.SecondsLimit > 0 {
		rem := max(q.SecondsLimit-q.SecondsUsed, 0)
		q.SecondsRemaining = &rem
	}
	return q
}

const voiceSettleSQL = `SELECT e.outcome, e.reserved, e.charged, e.voice_used
FROM quota_clock($4) c, LATERAL quota_voice_end($1, $2, $3, c.now, c.month) e`

// SettleVoice ends session sessionID of userID: it charges min(used,
// reserved) seconds and releases the rest, in one round trip, even when ctx
// is cancelled (bounded by settleTimeout or ctx's deadline). Any replica
// may call it. Ending a session again, within a
// day, changes nothing and returns the first end's figures with Replayed
// (or Reclaimed, if the reservation expired unended and was charged in
// full). A session it does not know gives SESSION_ENDED wrapping
// ErrNoReservation.
func (s *Service) SettleVoice(ctx context.Context, userID, sessionID string, usedSeconds int64) (VoiceSettlement, error) {
	ctx, cancel := detach(ctx, settleTimeout)
	defer cancel()
	return s.SettleVoiceWith(ctx, s.pool, userID, sessionID, usedSeconds)
}

// Queryer is what SettleVoiceWith needs: the pool, or the caller's
// transaction.
type Queryer interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// SettleVoiceWith is SettleVoice run with q: a voice end settles in the
// transaction that holds its session's row, so the settlement commits with
// the end, and no second connection is needed while the first is held.
func (s *Service) SettleVoiceWith(ctx context.Context, q Queryer, userID, sessionID string, usedSeconds int64) (VoiceSettlement, error) {
	if err := checkAmounts("voice seconds", usedSeconds); err != nil {
		return VoiceSettlement{}, err
	}
	var outcome string
	var reserved, charged *int64
	var used int64
	err := q.QueryRow(ctx, voiceSettleSQL, userID, sessionID, usedSeconds, s.clockArg()).
		Scan(&outcome, &reserved, &charged, &used)
	if err != nil {
		return VoiceSettlement{}, dbError("settle voice", err)
	}
	if outcome == "unknown" || reserved == nil || charged == nil {
		return VoiceSettlement{}, apierr.Wrap(apierr.SessionEnded, "", ErrNoReservation)
	}
	return VoiceSettlement{
		Reserved: *reserved, Charged: *charged, Released: *reserved - *charged, MonthUsed: used,
		Replayed: outcome == "ended_before", Reclaimed: outcome == "reclaimed",
	}, nil
}
