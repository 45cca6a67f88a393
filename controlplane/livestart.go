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
// session.closed). Failures are logged: the session then runs to the
// provider's own limit, and the sweeper has already ended the row.
func (s *Service) closeLive(ctx context.Context, liveID string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	sb, err := s.rt.AttachLive(ctx, liveID)
	if err == nil {
		err = sb.CloseSession(ctx)
		_ = sb.Close()
	}
	if err != nil {
		s.log.WarnContext(ctx, "live session close failed", "live_id", liveID, "err", err)
	}
}
