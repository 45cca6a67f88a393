package controlplane

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"go.opentelemetry.io/otel/trace"

	"github.com/voxgate/voxgate/billing"
	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/database"
	"github.com/voxgate/voxgate/quota"
)

// End reasons. The app may send the first four; the server sets the rest.
const (
	ReasonUserHangup      = "user_hangup"
	ReasonAppClosed       = "app_closed"
	ReasonError           = "error"
	ReasonTimeout         = "timeout"
	ReasonReplaced        = "replaced"
	ReasonExpired         = "expired"
	ReasonQuota           = "quota"
	ReasonIdle            = "idle"
	ReasonUpstreamExpired = "upstream_expired"
	ReasonSafety          = "safety" // a live session the provider closed for its content
)

// clientReasons are the reasons an app may give (DESIGN §6).
var clientReasons = map[string]bool{ReasonUserHangup: true, ReasonAppClosed: true, ReasonError: true, ReasonTimeout: true}

// EndRequest is an end: the reason and, in direct mode, the usage the app
// saw.
type EndRequest struct {
	Reason string
	Usage  *ReportedUsage
	// byHolder says the call's holder is ending its own session.
	byHolder bool
	// quietFor is how long a call ended for silence had been quiet: it is
	// charged up to its last event, not to the end.
	quietFor time.Duration
}

// endTimeout bounds an end's database work, even when the caller has gone:
// a session must not stay open, nor its seconds held, because a phone
// dropped its connection mid-request.
const endTimeout = 10 * time.Second

// End ends userID's session id. The first end wins; a later one returns the
// same session and record and changes nothing, except that usage reported
// after the sweeper closed a direct session is attached to its record once,
// with the overrun.
func (s *Service) End(ctx context.Context, userID, id string, req EndRequest) (Session, error) {
	if !validSessionID(id) {
		return Session{}, notFound(nil)
	}
	if req.Reason == "" {
		req.Reason = ReasonUserHangup
	}
	if !clientReasons[req.Reason] {
		return Session{}, apierr.New(apierr.InvalidRequest, "reason must be user_hangup, app_closed, error or timeout.")
	}
	sess, _, err := s.end(ctx, userID, id, req)
	return sess, err
}

// end ends a session for any reason. A sideband call this replica holds
// is ended by its holder first: it hangs up and reads the call's last
// events, so the record has all the usage observed. Then the database
// work (endAt) goes through the durable path (package spool): when the
// database does not take it in time it is spooled and completed once the
// database answers, at the time of this end, and the caller gets 503
// UNAVAILABLE; a retry then returns the ended session. ended says this
// call was the one that ended it.
func (s *Service) end(ctx context.Context, userID, id string, req EndRequest) (Session, bool, error) {
	defer s.spool.Hold()()
	ctx, cancel := s.spool.Detach(ctx, endTimeout)
	defer cancel()
	if !req.byHolder && s.release(ctx, userID, id, req.Reason) {
		req.byHolder = true // the holder hung up; what follows finds its end
	}
	j := &sessionEnd{UserID: userID, SessionID: id, Reason: req.Reason, Usage: req.Usage, ByHolder: req.byHolder,
		At: time.Now().Add(-req.quietFor).UTC(), s: s}
	spooled, err := s.spool.Do(ctx, sessionEndKind, j)
	if err != nil {
		return Session{}, false, err
	}
	if spooled {
		return Session{}, false, apierr.New(apierr.Unavailable, "").WithRetry(1)
	}
	if j.ended && j.sess.callID != nil && !req.byHolder {
		if j.sess.Mode == ModeLive {
			s.closeLive(ctx, *j.sess.callID)
		} else {
			s.hangup(ctx, *j.sess.callID)
		}
	}
	return j.sess, j.ended, nil
}

// endAt does an end's database work, as at the time at (the end is
// completed later when it was spooled), in one transaction that first
// locks the session row, found by id and owner, so nothing is done to
// another user's session: concurrent ends, replaces and sweepers on any
// replica take turns. An active session is then settled (settlement is
// idempotent per session: quota's own reclaim of an expired reservation
// is found, not charged again), marked ended and given its cost record,
// the record's tokens and cost added to the user's day; the last three in
// one batch. All of it commits together, so a session is never ended
// without its record, nor charged without being ended. The row is locked
// before the quota's rows, as every end locks them. A call held
// elsewhere, or by no one, is hung up by the caller once the session has
// ended.
func (s *Service) endAt(ctx context.Context, userID, id string, req EndRequest, at time.Time) (out Session, ended bool, err error) {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return Session{}, false, database.Error("controlplane: end", err)
	}
	defer tx.Rollback(ctx)
	var now time.Time
	var tp string
	sess, err := scanSession(tx.QueryRow(ctx, `SELECT `+sessionColumns+`, now(), trace_parent FROM voice_sessions
		WHERE id = $1 AND user_id = $2 FOR UPDATE`, id, userID), &now, &tp)
	if errors.Is(err, pgx.ErrNoRows) {
		return Session{}, false, notFound(err)
	}
	if err != nil {
		return Session{}, false, database.Error("controlplane: end", err)
	}
	if sess.Active() {
		// The end is the session's last span, in its start's trace.
		var span trace.Span
		ctx, span = startSessionSpan(ctx, tp, "voice end", sessionAttrs(id, sess.Mode)...)
		defer func() { traceEnded(span, req.Reason, out, ended, err) }()
	}
	now = earlier(now, at)
	if req.Usage != nil && sess.Mode == ModeDirect {
		// Bounded by the time the app has really had, overrun included.
		if err := s.ceilings.check(*req.Usage, now.Sub(sess.StartedAt).Milliseconds()); err != nil {
			return Session{}, false, err
		}
	}
	if !sess.Active() {
		sess, err = s.lateEnd(ctx, tx, sess, req, now)
		if err == nil {
			err = tx.Commit(ctx)
		}
		if err != nil {
			return Session{}, false, database.Error("controlplane: end", err)
		}
		return sess, false, nil
	}
	durationMS := min(max(now.Sub(sess.StartedAt).Milliseconds(), 0), sess.MaxDurationS*1000)
	used := (durationMS + 999) / 1000
	if req.Reason == ReasonExpired || req.Reason == ReasonQuota {
		durationMS, used = sess.MaxDurationS*1000, sess.MaxDurationS // the reservation ran out: charged in full
	}
	charged, err := s.settle(ctx, tx, sess, used)
	if err != nil {
		return Session{}, false, err
	}
	var b pgx.Batch
	b.Queue(`UPDATE voice_sessions SET ended_at = $2, end_reason = $3, duration_ms = $4, charged_s = $5
		WHERE id = $1`, id, now, req.Reason, durationMS, charged)
	// The record's created_at is the session's end, stamped under its row
	// lock: only the transaction that ends the session writes it, and a
	// spooled end's is when it happened (billing.Write's key).
	r := s.record(sess, req, durationMS, 0)
	r.CreatedAt = now
	queued, err := s.ledger.QueueWrite(ctx, &b, r)
	if err != nil {
		return Session{}, false, err
	}
	if err := s.queueChargeDay(&b, r, queued.Cost()); err != nil {
		return Session{}, false, err
	}
	if err := tx.SendBatch(ctx, &b).Close(); err != nil {
		return Session{}, false, database.Error("controlplane: end", err)
	}
	rec, err := queued.Record(ctx, tx)
	if err != nil {
		return Session{}, false, err
	}
	if err := tx.Commit(ctx); err != nil {
		return Session{}, false, database.Error("controlplane: end", err)
	}
	s.metrics.ended.WithLabelValues(sess.Mode, req.Reason).Inc()
	sess.EndedAt, sess.EndReason, sess.DurationMS, sess.ChargedS, sess.Cost = &now, &req.Reason, &durationMS, &charged, &rec
	return sess, true, nil
}

// earlier is the database's now, or the end's own time when that came
// first: a spooled end is charged up to when it happened, not up to when
// the database came back.
func earlier(now, at time.Time) time.Time {
	if !at.IsZero() && at.Before(now) {
		return at
	}
	return now
}

// settle charges the session's seconds to the month. Quota's own reclaim
// may have charged an expired reservation in full already, and an end
// retried after a lost reply finds the first end's charge: neither is an
// error, and neither charges twice.
func (s *Service) settle(ctx context.Context, tx pgx.Tx, sess Session, used int64) (int64, error) {
	st, err := s.quota.SettleVoiceWith(ctx, tx, sess.UserID, sess.ID, used)
	if errors.Is(err, quota.ErrNoReservation) {
		return sess.MaxDurationS, nil // reclaimed and forgotten: it was charged in full
	}
	if err != nil {
		return 0, err
	}
	return st.Charged, nil
}

// record is the session's cost record. Direct mode's usage is what the app
// reported; sideband's is what the gateway observed on the call, and
// whatever the app reports is ignored. A session ended with none (the
// sweeper, a replace, a call never placed) has none.
func (s *Service) record(sess Session, req EndRequest, durationMS, overrunS int64) billing.Record {
	r := billing.Record{
		UserID: sess.UserID, SessionID: sess.ID, Kind: billing.KindVoice, Provider: sess.provider, Model: sess.Model,
		DurationMS: durationMS, OverrunS: overrunS, UsageSource: billing.SourceNone,
	}
	if sess.Mode == ModeLive {
		return liveRecord(r, sess.observed)
	}
	u, source := req.Usage, billing.SourceClientReported
	if sess.Mode != ModeDirect {
		u, source = sess.observed, billing.SourceServerObserved
	}
	if u != nil {
		r.Usage, r.UsageSource = u.Session, source
		if !u.Transcription.IsZero() {
			r.Transcription, r.TranscriptionModel = u.Transcription, sess.transcriptionModel
		}
	}
	return r
}

// chargeDay counts the record's tokens and cost toward the user's day, in
// the transaction that writes it. An unpriced record adds its tokens only.
func (s *Service) chargeDay(ctx context.Context, tx pgx.Tx, rec billing.Record) error {
	in, out := rec.TokenCount()
	return s.quota.ChargeDay(ctx, tx, rec.UserID, in+out, costOf(rec.CostMicros))
}

// queueChargeDay is chargeDay queued on b, the batch that writes r, whose
// cost as priced is cost.
func (s *Service) queueChargeDay(b *pgx.Batch, r billing.Record, cost *int64) error {
	in, out := r.TokenCount()
	return s.quota.QueueChargeDay(b, r.UserID, in+out, costOf(cost))
}

// costOf is a record's cost for the day: nothing for an unpriced one.
func costOf(cost *int64) int64 {
	if cost == nil {
		return 0
	}
	return *cost
}

// lateEnd answers an end of a session already ended. A direct session the
// sweeper closed gets the app's late usage attached, with how far past its
// reservation the app kept going; anything else is returned as it is.
func (s *Service) lateEnd(ctx context.Context, tx pgx.Tx, sess Session, req EndRequest, now time.Time) (Session, error) {
	rec, ok, err := s.ledger.SessionRecord(ctx, tx, sess.ID)
	if err != nil || !ok {
		return sess, err
	}
	if req.Usage != nil && sess.Mode == ModeDirect && rec.UsageSource == billing.SourceNone && *sess.EndReason == ReasonExpired {
		overrun := max(int64(now.Sub(sess.ExpiresAt)/time.Second), 0)
		r := s.record(sess, req, *sess.DurationMS, overrun)
		if rec, err = s.ledger.AttachUsage(ctx, tx, r); err != nil {
			return sess, err
		}
		if err := s.chargeDay(ctx, tx, rec); err != nil {
			return sess, err
		}
	}
	sess.Cost = &rec
	return sess, nil
}

// Sweep ends every session past its reservation (end_reason expired,
// charged in full), and every relayed session whose replica died
// (relaysweep.go), and returns how many this call ended. Every replica
// sweeps; the row lock in end makes each session end once.
func (s *Service) Sweep(ctx context.Context) (int, error) {
	n, err := s.sweepRelays(ctx)
	if err != nil {
		return n, err
	}
	rows, err := s.pool.Query(ctx, `SELECT id, user_id FROM voice_sessions
		WHERE ended_at IS NULL AND expires_at <= now() ORDER BY expires_at LIMIT 500`)
	if err != nil {
		return n, database.Error("controlplane: sweep", err)
	}
	type due struct{ id, user string }
	list, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (due, error) {
		var d due
		return d, r.Scan(&d.id, &d.user)
	})
	if err != nil {
		return n, database.Error("controlplane: sweep", err)
	}
	for _, d := range list {
		if ctx.Err() != nil {
			break
		}
		_, ended, err := s.end(ctx, d.user, d.id, EndRequest{Reason: ReasonExpired})
		if err != nil {
			return n, err
		}
		if ended {
			n++
		}
	}
	return n, nil
}
