package controlplane

import (
	"context"
	"encoding/json"
	"time"

	"github.com/voxgate/voxgate/internal/database"
	"github.com/voxgate/voxgate/realtime"
)

// liveConfig is a live session's row: the GPT-Live model, no transcription
// model (the session transcribes for itself, inside its per-second price),
// and the startup config the offer creates the session with. The tools are
// not in it: the voice delegates every task to the gateway, which runs the
// plan's voice tools itself.
func (s *Service) liveConfig(sess realtime.Session) (model, transcription string, config []byte) {
	live := realtime.LiveSession{Model: s.cfg.Live.Model, Voice: sess.Voice, Instructions: sess.Instructions,
		AckDelay: s.cfg.Live.AcknowledgementDelay}
	config, _ = json.Marshal(live) // plain data
	return live.Model, "", config
}

// offerLive creates session id's GPT-Live session with the phone's offer
// and the row's config, keeps its id and holds its sideband. The 15 s the
// provider bills for creating it are already inside the reservation
// Start took (its minimum charge is what endLive records when the session
// never ran).
func (s *Service) offerLive(ctx context.Context, userID, id, offer string, config []byte) (string, error) {
	var sess realtime.LiveSession
	if err := json.Unmarshal(config, &sess); err != nil {
		s.freeOffer(ctx, id)
		return "", database.Error("controlplane: live config", err)
	}
	began := time.Now()
	call, err := s.rt.CreateLive(ctx, offer, sess)
	s.metrics.mint.Observe(time.Since(began).Seconds())
	if err != nil {
		s.freeOffer(ctx, id)
		return "", err
	}
	if err := s.keepCall(ctx, userID, id, call.ID, s.closeLive); err != nil {
		return "", err
	}
	return call.Answer, nil
}

// closeLive ends a live session nobody here holds: attach, ask for the
// close, and let the socket go (the holder, where there is one, reads the
// session.closed). A WebRTC session has no other means of ending it from
// the server (hangup is for SIP calls): left open, it bills until the
// provider expires it, 2 h on. So the attach is tried closeLiveTries times
// within the 10 s bound, whatever refused it, and a session still open
// after that is logged with why, as left running until it expires, and
// counted (voxgate_voice_live_sessions_left_open_total, an alert).
func (s *Service) closeLive(ctx context.Context, liveID string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	var err error
	for try, wait := 1, 200*time.Millisecond; ; try, wait = try+1, 2*wait {
		var sb *realtime.LiveSideband
		if sb, err = s.rt.AttachLive(ctx, liveID); err == nil {
			err = sb.CloseSession(ctx)
			_ = sb.Close()
		}
		if err == nil || try == closeLiveTries || !sleepCtx(ctx, wait) {
			break
		}
	}
	if err != nil {
		s.metrics.live.leftOpen.Inc()
		s.log.WarnContext(ctx, "live session close failed; it runs, and bills, until the provider expires it",
			"live_id", liveID, "tries", closeLiveTries, "err", err)
	}
}

// closeLiveTries bounds the attaches closeLive makes to end a session.
const closeLiveTries = 3

// sleepCtx waits d, or reports false when ctx ends first.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
