package controlplane

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/auth"
	"github.com/voxgate/voxgate/internal/database"
	"github.com/voxgate/voxgate/internal/httpx"
	"github.com/voxgate/voxgate/realtime"
)

// MaxOfferBytes caps an SDP offer (DESIGN §6), checked before it is read.
const MaxOfferBytes = 64 * 1024

// HandleSDP serves POST /v1/voice/sessions/{id}/sdp: the app's SDP offer
// in, 201 with the provider's answer out (application/sdp both ways).
func (s *Service) HandleSDP(w http.ResponseWriter, r *http.Request) error {
	p, err := auth.Caller(r.Context())
	if err != nil {
		return err
	}
	offer, err := readOffer(r)
	if err != nil {
		return err
	}
	answer, err := s.Offer(r.Context(), p, r.PathValue("id"), offer)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/sdp")
	w.WriteHeader(http.StatusCreated)
	_, _ = io.WriteString(w, answer)
	return nil
}

// readOffer reads an application/sdp body of at most MaxOfferBytes
// through the one body reader (httpx.ReadBody): a declared length over
// the cap is refused before a byte is read.
func readOffer(r *http.Request) (string, error) {
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/sdp" {
		return "", apierr.New(apierr.InvalidRequest, "The offer must be sent as Content-Type: application/sdp.")
	}
	body, err := httpx.ReadBody(r, MaxOfferBytes)
	if err != nil {
		return "", err
	}
	offer := string(body)
	if err := checkOffer(offer); err != nil {
		return "", err
	}
	return offer, nil
}

// claimOfferSQL takes a sideband session's one offer: the user's, open,
// within its reservation, not offered before, and with attempts left.
// Each claim is an attempt, whatever the provider answers.
const claimOfferSQL = `UPDATE voice_sessions SET offer_at = now(), offer_attempts = offer_attempts + 1
WHERE id = $1 AND user_id = $2 AND mode IN ('sideband', 'relay', 'live') AND offer_at IS NULL AND ended_at IS NULL AND expires_at > now()
  AND offer_attempts < $3
RETURNING mode, config, trace_parent`

// Offer places the call for p's sideband session id: the provider gets
// the app's offer with the server key and the session's config, the
// gateway keeps the call id and holds the call's sideband, and the app
// gets the SDP answer. One offer per session; a provider failure frees
// the offer so the app may try again.
func (s *Service) Offer(ctx context.Context, p auth.Principal, id, offer string) (answer string, err error) {
	if !validSessionID(id) {
		return "", notFound(nil)
	}
	var mode, tp string
	var config []byte
	err = s.pool.QueryRow(ctx, claimOfferSQL, id, p.UserID, MaxOfferAttempts).Scan(&mode, &config, &tp)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", s.offerRefusal(ctx, p.UserID, id)
	}
	if err != nil {
		return "", database.Error("controlplane: take the offer", err)
	}
	// The exchange is the session's (its start's trace), whatever trace
	// the offer's own request is in; the call's creation is under it.
	ctx, span := startSessionSpan(ctx, tp, "voice sdp", sessionAttrs(id, mode)...)
	defer func() { endSpan(span, err) }()
	if err := s.ensureLease(ctx); err != nil {
		s.freeOffer(ctx, id)
		return "", database.Error("controlplane: take the lease", err)
	}
	if mode == ModeLive {
		return s.offerLive(ctx, p.UserID, id, offer, config)
	}
	var sess realtime.Session
	if err := json.Unmarshal(config, &sess); err != nil {
		s.freeOffer(ctx, id)
		return "", apierr.Wrap(apierr.Internal, "", err)
	}
	if mode == ModeRelay {
		return s.offerRelay(ctx, p.UserID, id, offer, sess)
	}
	began := time.Now()
	call, err := s.rt.CreateCall(ctx, offer, sess)
	s.metrics.mint.Observe(time.Since(began).Seconds())
	if err != nil {
		s.freeOffer(ctx, id)
		return "", err
	}
	if err := s.keepCall(ctx, p.UserID, id, call.ID, s.hangup); err != nil {
		return "", err
	}
	return call.Answer, nil
}

// keepCall stores the provider's id of userID's session id's call and
// holds it here. A call up at the provider that nobody could ever hold is undone
// (hung up, or closed for live) and the offer freed for another try.
func (s *Service) keepCall(ctx context.Context, userID, id, callID string, undo func(context.Context, string)) error {
	if _, err := s.pool.Exec(ctx, `UPDATE voice_sessions SET call_id = $2, holder = $3 WHERE id = $1`, id, callID, s.replica); err != nil {
		undo(ctx, callID)
		s.freeOffer(ctx, id)
		return database.Error("controlplane: keep the call id", err)
	}
	s.hold(id, userID)
	return nil
}

func (s *Service) freeOffer(ctx context.Context, id string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if _, err := s.pool.Exec(ctx, `UPDATE voice_sessions SET offer_at = NULL WHERE id = $1 AND call_id IS NULL`, id); err != nil {
		s.log.WarnContext(ctx, "voice offer not freed", "session_id", id, "err", err)
	}
}

// offerRefusal says why claimOffer refused: no such session of this
// user, ended, not sideband, out of attempts, or offered already.
func (s *Service) offerRefusal(ctx context.Context, userID, id string) error {
	var mode string
	var ended, offered bool
	var attempts int
	err := s.pool.QueryRow(ctx, `SELECT mode, ended_at IS NOT NULL OR expires_at <= now(), offer_at IS NOT NULL, offer_attempts
		FROM voice_sessions WHERE id = $1 AND user_id = $2`, id, userID).Scan(&mode, &ended, &offered, &attempts)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return notFound(err)
	case err != nil:
		return database.Error("controlplane: offer refusal", err)
	case ended:
		return apierr.New(apierr.SessionEnded, "")
	case mode != ModeSideband && mode != ModeRelay && mode != ModeLive:
		return apierr.Errorf(apierr.Conflict, "This is a %s session: it takes no offer through the gateway.", mode)
	case !offered && attempts >= MaxOfferAttempts:
		return apierr.Errorf(apierr.Conflict, "This session has used its %d offer attempts; start a new session.", MaxOfferAttempts)
	}
	return apierr.New(apierr.Conflict, "This session already has its call; start a new session for another.")
}
