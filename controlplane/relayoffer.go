package controlplane

import (
	"context"
	"errors"
	"time"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/database"
	"github.com/voxgate/voxgate/realtime"
)

// offerRelay answers a relayed session's offer: the relay places its own
// call to the provider (its offer, the server key, the session's config),
// answers the phone's offer with the gateway's own peer, and the replica
// holds the call as it holds a sideband, reading the provider's events off
// the relayed channel instead of a socket. The media is pinned to this
// replica: no other can adopt the call.
func (s *Service) offerRelay(ctx context.Context, userID, id, offer string, sess realtime.Session) (string, error) {
	link := newRelayLink(s, id)
	r, err := realtime.NewRelay(realtime.RelayParams{
		Network: s.relayNet,
		Dial: func(ctx context.Context, offer string) (realtime.Call, error) {
			began := time.Now()
			call, err := s.rt.CreateCall(ctx, offer, sess)
			s.metrics.mint.Observe(time.Since(began).Seconds())
			return call, err
		},
		Intercept: link.intercept,
		OnEvent:   link.onEvent,
	})
	if err != nil {
		s.freeOffer(ctx, id)
		return "", apierr.Wrap(apierr.Internal, "", err)
	}
	link.r = r
	s.relays.add(link)
	answer, err := r.Answer(ctx, offer)
	if err != nil {
		s.dropRelay(ctx, id, link)
		var provider *apierr.Error
		if errors.As(err, &provider) {
			return "", err // the provider's refusal, normalized by the client
		}
		return "", apierr.Wrap(apierr.Validation, "The offer could not be answered.", err)
	}
	if _, err := s.pool.Exec(ctx, `UPDATE voice_sessions SET call_id = $2, holder = $3 WHERE id = $1`, id, r.CallID(), s.replica); err != nil {
		s.dropRelay(ctx, id, link)
		return "", database.Error("controlplane: keep the call id", err)
	}
	if !s.holdWith(id, userID, link) {
		s.dropRelay(ctx, id, link)
		return "", apierr.New(apierr.Unavailable, "").WithRetry(1)
	}
	return answer, nil
}

// dropRelay undoes a relayed offer that failed: both legs closed, the
// provider's call (if placed) hung up, the offer freed for another try.
func (s *Service) dropRelay(ctx context.Context, id string, link *relayLink) {
	callID := link.r.CallID()
	_ = link.Close()
	if callID != "" {
		s.hangup(ctx, callID)
	}
	s.freeOffer(ctx, id)
}
