package controlplane

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/voxgate/voxgate/internal/heartbeat"
)

// handoverWait bounds how long a closing replica holds its calls waiting
// for other replicas to adopt them.
const handoverWait = 5 * time.Second

// runLeases renews this replica's lease, lets go of calls that are no
// longer its own, and adopts calls nobody holds, every LeaseRenew until
// ctx ends. Its database work is per replica, not per call: one upsert,
// one save of the usage observed since the last, one check of the calls
// held here, one adoption scan.
func (s *Service) runLeases(ctx context.Context) {
	upkeep := func(ctx context.Context) {
		if err := s.leaseTick(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("voice lease upkeep failed", "err", err)
		}
	}
	upkeep(ctx)
	heartbeat.Every(ctx, s.cfg.LeaseRenew, upkeep)
}

// adoptSQL takes the open calls whose holder's lease has lapsed, or that
// were handed over (no holder), a batch at a time. A relayed call is never
// adopted: its media is pinned to its replica (relaysweep.go). It finds them through
// the partial index on open calls' holders, so a scan with nothing to
// adopt costs next to nothing however many calls are held; SKIP LOCKED
// keeps two adopting replicas off each other's rows.
const adoptSQL = `UPDATE voice_sessions SET holder = $1 WHERE id IN (
	SELECT v.id FROM voice_sessions v
	WHERE v.ended_at IS NULL AND v.call_id IS NOT NULL AND v.expires_at > now() AND v.mode <> 'relay'
		AND (v.holder IS NULL OR v.holder IN (SELECT r.id FROM voice_replicas r WHERE r.lease_until <= now() AND r.id <> $1))
	ORDER BY v.id LIMIT 100 FOR UPDATE OF v SKIP LOCKED)
RETURNING id, user_id`

// forgetSQL removes the lease rows of replicas long dead whose calls have
// all been adopted or ended.
const forgetSQL = `DELETE FROM voice_replicas r WHERE r.lease_until < now() - interval '1 minute'
	AND NOT EXISTS (SELECT 1 FROM voice_sessions v WHERE v.holder = r.id AND v.ended_at IS NULL AND v.call_id IS NOT NULL)`

// renewSQL renews (or first takes) this replica's lease.
const renewSQL = `INSERT INTO voice_replicas (id, lease_until) VALUES ($1, now() + $2::float8 * interval '1 second')
	ON CONFLICT (id) DO UPDATE SET lease_until = EXCLUDED.lease_until`

// ensureLease takes this replica's lease before its first call, so a call
// placed before Run's first renewal has a holder others can see lapse.
func (s *Service) ensureLease(ctx context.Context) error {
	if s.leased.Load() {
		return nil
	}
	if _, err := s.pool.Exec(ctx, renewSQL, s.replica, s.cfg.LeaseTTL.Seconds()); err != nil {
		return err
	}
	s.leased.Store(true)
	return nil
}

func (s *Service) leaseTick(ctx context.Context) error {
	s.upkeep.Lock()
	defer s.upkeep.Unlock()
	s.hmu.Lock()
	closing := s.closing
	held := make([]string, 0, len(s.holders))
	for id := range s.holders {
		held = append(held, id)
	}
	s.hmu.Unlock()
	if closing {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.LeaseTTL)
	defer cancel()
	if _, err := s.pool.Exec(ctx, renewSQL, s.replica, s.cfg.LeaseTTL.Seconds()); err != nil {
		return err
	}
	s.leased.Store(true)
	s.saveUsage(ctx)
	if len(held) > 0 {
		rows, err := s.pool.Query(ctx, `SELECT id FROM voice_sessions WHERE id = ANY($1)
			AND (ended_at IS NOT NULL OR holder IS DISTINCT FROM $2)`, held, s.replica)
		if err != nil {
			return err
		}
		gone, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return err
		}
		for _, id := range gone {
			s.drop(id)
		}
	}
	rows, err := s.pool.Query(ctx, adoptSQL, s.replica)
	if err != nil {
		return err
	}
	type call struct{ id, user string }
	adopted, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (call, error) {
		var c call
		return c, r.Scan(&c.id, &c.user)
	})
	if err != nil {
		return err
	}
	for _, c := range adopted {
		s.metrics.adoptions.Inc()
		s.log.Info("voice sideband: adopting a call", "session_id", c.id)
		s.hold(c.id, c.user)
	}
	_, err = s.pool.Exec(ctx, forgetSQL)
	return err
}

// drop lets go of a call this replica no longer holds.
func (s *Service) drop(id string) {
	s.hmu.Lock()
	h := s.holders[id]
	s.hmu.Unlock()
	if h != nil {
		h.drop()
	}
}

// handOver releases every call this replica holds and its lease, then
// keeps holding each until its adopter's socket is on (or it ended), or
// handoverWait. It waits for an upkeep under way to finish first: one
// that began before Close may adopt a released call, and the release must
// come after it.
func (s *Service) handOver() {
	s.upkeep.Lock()
	defer s.upkeep.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), handoverWait)
	defer cancel()
	s.saveUsage(ctx)
	if _, err := s.pool.Exec(ctx, `UPDATE voice_sessions SET holder = NULL, attached_at = NULL WHERE holder = $1 AND ended_at IS NULL AND mode <> 'relay'`, s.replica); err != nil {
		s.log.Warn("voice hand-over failed; the calls are adopted when the lease lapses", "err", err)
		return
	}
	s.leased.Store(false)
	if _, err := s.pool.Exec(ctx, `DELETE FROM voice_replicas WHERE id = $1`, s.replica); err != nil {
		s.log.Warn("voice lease not released", "err", err)
	}
	// With no other replica alive, nobody will adopt before this one is
	// gone: the calls wait for the next replica to start.
	var others bool
	if err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM voice_replicas WHERE lease_until > now())`).Scan(&others); err != nil || !others {
		return
	}
	for s.Held() > 0 {
		var waiting []string
		s.hmu.Lock()
		for id := range s.holders {
			waiting = append(waiting, id)
		}
		s.hmu.Unlock()
		rows, err := s.pool.Query(ctx, `SELECT id FROM voice_sessions WHERE id = ANY($1)
			AND (ended_at IS NOT NULL OR (holder IS NOT NULL AND attached_at IS NOT NULL))`, waiting)
		if err == nil {
			var taken []string
			if taken, err = pgx.CollectRows(rows, pgx.RowTo[string]); err == nil {
				for _, id := range taken {
					s.drop(id)
				}
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(50 * time.Millisecond):
		}
	}
}
