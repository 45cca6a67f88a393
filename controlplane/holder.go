package controlplane

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/voxgate/voxgate/internal/database"
	"github.com/voxgate/voxgate/realtime"
)

// holder is this replica's hold on one call, in any mode but direct: the
// goroutine that runs it (hold.go) and the way to ask it to end.
type holder struct {
	ends     chan string   // an end from elsewhere: hang up, drain, end with this reason
	quit     chan struct{} // closed when the call is no longer this replica's: stop, end nothing
	quitOnce sync.Once
	done     chan struct{} // closed once the holder is gone
	link     *relayLink    // a relayed call's events; nil for a sideband
	// user owns the session: only an end in that user's name (or the
	// server's own, which ends in the owner's name too) may release it.
	user string
}

// drop stops the holder without ending its session: the session ended
// elsewhere, or another replica holds the call now.
func (h *holder) drop() { h.quitOnce.Do(func() { close(h.quit) }) }

// hold starts holding userID's session id's sideband call, unless this
// replica already does or is closing.
func (s *Service) hold(id, userID string) { s.holdWith(id, userID, nil) }

// holdWith starts holding userID's session id's call: a relayed one reads
// its events off link. It reports whether it did.
func (s *Service) holdWith(id, userID string, link *relayLink) bool {
	s.hmu.Lock()
	defer s.hmu.Unlock()
	if s.closing || s.holders[id] != nil {
		return false
	}
	h := &holder{ends: make(chan string, 1), quit: make(chan struct{}), done: make(chan struct{}), link: link, user: userID}
	s.holders[id] = h
	s.metrics.held.Inc()
	s.hwg.Add(1)
	go func() {
		defer s.hwg.Done()
		defer func() {
			s.hmu.Lock()
			delete(s.holders, id)
			s.hmu.Unlock()
			s.metrics.held.Dec()
			close(h.done)
		}()
		s.runCall(s.life, id, h)
		if link != nil {
			_ = link.Close() // however the holder ended, both legs close
		}
	}()
	return true
}

// release asks this replica's holder of userID's session id, if there is
// one, to hang up and end the session with reason, and waits until it
// has: the holder reads the call's last events, so the record has every
// usage the call reported. It reports whether there was a holder. A
// session of another user's is not touched: the end that named it goes on
// to the owner check in the database, and its 404.
func (s *Service) release(ctx context.Context, userID, id, reason string) bool {
	s.hmu.Lock()
	h := s.holders[id]
	s.hmu.Unlock()
	if h == nil || h.user != userID {
		return false
	}
	select {
	case h.ends <- reason:
	default: // already asked
	}
	select {
	case <-h.done:
	case <-ctx.Done():
	}
	return true
}

// Held is how many sideband calls this replica holds.
func (s *Service) Held() int {
	s.hmu.Lock()
	defer s.hmu.Unlock()
	return len(s.holders)
}

// Close stops holding calls and waits for every holder to stop. The
// sessions stay open: their calls go on. When Run keeps a lease, the calls
// are handed over first: released for the other replicas to adopt, and
// held until they have (at most handoverWait), so no event goes unread.
func (s *Service) Close() {
	s.hmu.Lock()
	s.closing = true
	leasing := s.leasing
	s.hmu.Unlock()
	s.endRelays() // relayed calls cannot be handed over
	if leasing {
		s.handOver()
	}
	s.stop()
	s.hwg.Wait()
	s.dwg.Wait() // live delegations, cancelled with their holders
	if s.relayNet != nil {
		_ = s.relayNet.Close()
	}
}

// heldSession is what a holder needs of its session's row.
type heldSession struct {
	userID, plan, callID, mode string
	// language is the session's ("" when the app gave none): what the
	// model says is screened in it, else in each sentence's own.
	language   string
	config     realtime.Session
	live       realtime.LiveSession // a live session's config
	transcript []LiveLine           // and its transcript so far
	screenedMS int64                // and how far that is screened
	observed   ReportedUsage
	deadline   time.Time // the reservation's end, on this replica's clock
	max        time.Duration
	// traceParent is the session's trace (tracing.go): the holder's spans
	// continue it, on whichever replica holds the call.
	traceParent string
}

// loadHeld reads an open session with a call. The deadline is the time
// left by the database clock, laid on this replica's.
func (s *Service) loadHeld(ctx context.Context, id string) (heldSession, error) {
	var h heldSession
	var config, observed []byte
	var left float64
	var maxS int64
	err := s.pool.QueryRow(ctx, `SELECT user_id, plan, mode, call_id, coalesce(language, ''), config, observed, max_duration_s,
		extract(epoch FROM expires_at - now())::float8, trace_parent
		FROM voice_sessions WHERE id = $1 AND ended_at IS NULL AND call_id IS NOT NULL`, id).
		Scan(&h.userID, &h.plan, &h.mode, &h.callID, &h.language, &config, &observed, &maxS, &left, &h.traceParent)
	if err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return h, err
		}
		return h, database.Error("controlplane: load a held session", err)
	}
	h.deadline = s.clock.Now().Add(time.Duration(left * float64(time.Second)))
	h.max = time.Duration(maxS) * time.Second
	if h.mode == ModeLive {
		if err := json.Unmarshal(config, &h.live); err != nil {
			return h, err
		}
	} else if err := json.Unmarshal(config, &h.config); err != nil {
		return h, err
	}
	if observed != nil {
		if err := json.Unmarshal(observed, &h.observed); err != nil {
			return h, err
		}
		if h.mode == ModeLive {
			var lo liveObserved
			if err := json.Unmarshal(observed, &lo); err != nil {
				return h, err
			}
			h.transcript, h.screenedMS = lo.Transcript, lo.ScreenedMS
		}
	}
	return h, nil
}

// hangupTries is how often a hangup is tried before the session is ended
// without it.
const hangupTries = 4

// hangup ends a call at the provider, retrying failures with backoff. A
// call already gone is done.
func (s *Service) hangup(ctx context.Context, callID string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	wait := 100 * time.Millisecond
	for try := 1; ; try++ {
		err := s.rt.Hangup(ctx, callID)
		if err == nil || errors.Is(err, realtime.ErrCallNotFound) {
			return
		}
		if try == hangupTries || ctx.Err() != nil {
			s.log.WarnContext(ctx, "voice hangup failed; the session ends without it", "call_id", callID, "err", err)
			return
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		}
		wait *= 2
	}
}
