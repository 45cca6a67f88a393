package quota

import (
	"context"
	"time"

	"github.com/voxgate/voxgate/internal/heartbeat"
)

// Cleanup batch sizes: each statement touches few rows, so it holds its row
// locks for a moment and never blocks admissions for long.
const (
	reclaimBatch = 100 // users per reclaim pass
	purgeBatch   = 500 // idle user rows per delete
	maxBatches   = 20  // per kind per sweep, so one sweep stays short
	// settledKeep is how long a settlement or a voice end is remembered
	// (quota_settlements, quota_voice_ended): far longer than any retry of
	// it may come.
	settledKeep = 24 * time.Hour
)

// Run sweeps every 30 s until ctx is done: it reclaims expired leases and
// voice reservations, drops old global windows and deletes user rows idle
// since before this month. Admissions reclaim a user's expired leases on
// their own; the sweep keeps the tables small and /v1/me honest for users
// who do not come back. Every replica may run it: the statements skip rows
// another replica holds.
func (s *Service) Run(ctx context.Context) {
	sweep := func(ctx context.Context) {
		if err := s.Sweep(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("quota: sweep failed", "err", err)
		}
	}
	sweep(ctx)
	heartbeat.Every(ctx, s.sweepEvery, sweep)
}

// Sweep is one cleanup pass, bounded by s.sweepTimeout so that a database
// that stops answering cannot hold it (Run then tries again next tick). Run
// calls it; tests call it directly.
func (s *Service) Sweep(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, s.sweepTimeout)
	defer cancel()
	// One clock reading for the whole pass: an instant a moment old only
	// makes the pass reclaim and purge a little less.
	var w windows
	if err := s.pool.QueryRow(ctx, `SELECT `+clockCols+` FROM quota_clock($1) c`, s.clockArg()).Scan(w.dest()...); err != nil {
		return dbError("sweep clock", err)
	}
	w.utc()
	for range maxBatches {
		n, err := s.reclaimExpired(ctx, w)
		if err != nil || n < reclaimBatch {
			if err != nil {
				return err
			}
			break
		}
	}
	// The global window is only ever read for the current minute.
	if _, err := s.pool.Exec(ctx, `DELETE FROM quota_global WHERE window_start < $1`, w.minute); err != nil {
		return dbError("sweep global", err)
	}
	for range maxBatches {
		tag, err := s.pool.Exec(ctx, purgeIdleSQL, w.day, w.month)
		if err != nil {
			return dbError("sweep users", err)
		}
		if tag.RowsAffected() < purgeBatch {
			break
		}
	}
	for _, purge := range []struct{ op, sql string }{
		{"sweep settlements", purgeSettledSQL},
		{"sweep voice ends", purgeVoiceEndedSQL},
	} {
		for range maxBatches {
			tag, err := s.pool.Exec(ctx, purge.sql, w.now.Add(-settledKeep))
			if err != nil {
				return dbError(purge.op, err)
			}
			if tag.RowsAffected() < purgeBatch {
				break
			}
		}
	}
	return nil
}

// reclaimExpired reclaims up to reclaimBatch users, one short transaction
// each, and returns how many it found.
func (s *Service) reclaimExpired(ctx context.Context, w windows) (int, error) {
	rows, err := s.pool.Query(ctx, `SELECT user_id FROM quota_tickets WHERE expires_at <= $1
		UNION SELECT user_id FROM quota_voice WHERE expires_at <= $1 LIMIT $2`, w.now, reclaimBatch)
	if err != nil {
		return 0, dbError("sweep find", err)
	}
	var users []string
	for rows.Next() {
		var u string
		if err := rows.Scan(&u); err != nil {
			rows.Close()
			return 0, dbError("sweep find", err)
		}
		users = append(users, u)
	}
	if err := rows.Err(); err != nil {
		return 0, dbError("sweep find", err)
	}
	for _, u := range users {
		if _, err := s.pool.Exec(ctx, `SELECT quota_reclaim_user($1, $2, $3)`, u, w.now, w.month); err != nil {
			return 0, dbError("sweep reclaim", err)
		}
	}
	return len(users), nil
}

// purgeIdleSQL deletes user rows whose every counter belongs to a past day
// and month and that hold nothing in flight: a new row would read the same.
// SKIP LOCKED leaves rows an admission holds.
const purgeIdleSQL = `DELETE FROM quota_users WHERE user_id IN (
	SELECT user_id FROM quota_users
	WHERE day < $1 AND month < $2 AND leases = 0
	  AND NOT EXISTS (SELECT 1 FROM quota_voice v WHERE v.user_id = quota_users.user_id)
	LIMIT 500 FOR UPDATE SKIP LOCKED)`

// purgeSettledSQL and purgeVoiceEndedSQL forget settlements and voice ends
// older than $1: no retry of them can still come.
const purgeSettledSQL = `DELETE FROM quota_settlements WHERE (user_id, ticket_id) IN (
	SELECT user_id, ticket_id FROM quota_settlements WHERE settled_at < $1
	LIMIT 500 FOR UPDATE SKIP LOCKED)`

const purgeVoiceEndedSQL = `DELETE FROM quota_voice_ended WHERE session_id IN (
	SELECT session_id FROM quota_voice_ended WHERE ended_at < $1
	LIMIT 500 FOR UPDATE SKIP LOCKED)`
