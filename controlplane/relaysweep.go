package controlplane

import (
	"context"
	"sync"

	"github.com/jackc/pgx/v5"

	"github.com/voxgate/voxgate/internal/database"
)

// deadRelaysSQL finds relayed calls whose replica's lease has lapsed (or
// is gone). A relayed call's media runs through its replica's own peers,
// so no other replica can take it over as it adopts a sideband: when the
// replica dies, the call is over.
const deadRelaysSQL = `SELECT v.id, v.user_id FROM voice_sessions v
WHERE v.ended_at IS NULL AND v.mode = 'relay' AND v.call_id IS NOT NULL AND v.holder IS DISTINCT FROM $1
	AND NOT EXISTS (SELECT 1 FROM voice_replicas r WHERE r.id = v.holder AND r.lease_until > now())
ORDER BY v.id LIMIT 500`

// sweepRelays ends the relayed sessions of dead replicas with end_reason
// error, charged up to now with the usage their holder last saved, and
// hangs up their calls.
func (s *Service) sweepRelays(ctx context.Context) (int, error) {
	rows, err := s.pool.Query(ctx, deadRelaysSQL, s.replica)
	if err != nil {
		return 0, database.Error("controlplane: sweep relays", err)
	}
	type due struct{ id, user string }
	list, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (due, error) {
		var d due
		return d, r.Scan(&d.id, &d.user)
	})
	if err != nil {
		return 0, database.Error("controlplane: sweep relays", err)
	}
	n := 0
	for _, d := range list {
		if ctx.Err() != nil {
			break
		}
		_, ended, err := s.end(ctx, d.user, d.id, EndRequest{Reason: ReasonError})
		if err != nil {
			return n, err
		}
		if ended {
			n++
		}
	}
	return n, nil
}

// endRelays ends every relayed call this replica holds, as it stops: its
// media goes with it, so nobody could adopt them. Each is hung up and
// ended with end_reason error, charged up to now, at most handoverWait.
func (s *Service) endRelays() {
	s.hmu.Lock()
	held := map[string]string{} // session: its user
	for id, h := range s.holders {
		if h.link != nil {
			held[id] = h.user
		}
	}
	s.hmu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), handoverWait)
	defer cancel()
	var wg sync.WaitGroup
	for id, user := range held {
		wg.Go(func() { s.release(ctx, user, id, ReasonError) })
	}
	wg.Wait()
}
