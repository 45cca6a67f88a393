package billing

import (
	"context"
	"time"

	"github.com/voxgate/voxgate/internal/database"
)

// A record's share of the rollups is appended to usage_rollup_deltas by
// its trigger (migration 0081), a plain insert no other writer waits on;
// folding moves the deltas into the rollups. Summaries read the rollups
// and the deltas not yet folded, so folding changes how fast a summary
// is, never what it says.
const (
	// FoldInterval is how often each replica folds. A second keeps the
	// deltas a summary reads to about a second of records.
	FoldInterval = time.Second
	// foldBatch bounds one fold's transaction; a larger backlog (a
	// replica that was down) is folded a batch at a time.
	foldBatch = 20_000
	// foldLock is the advisory lock that keeps one replica folding at a
	// time: two would only take turns on the same rollup rows.
	foldLock = 0x766f786766 // "voxgf"
)

// Fold moves pending deltas into the rollups, a batch per statement (its
// own transaction, which the advisory lock lasts), until none are left or
// another replica is folding. It returns how many it folded.
func (l *Ledger) Fold(ctx context.Context) (int64, error) {
	var total int64
	for {
		var n int64 // -1: another replica holds the lock
		err := l.pool.QueryRow(ctx, `SELECT CASE WHEN pg_try_advisory_xact_lock($1) THEN usage_rollups_fold($2) ELSE -1 END`,
			foldLock, foldBatch).Scan(&n)
		if err != nil {
			return total, database.Error("billing: fold the rollups", err)
		}
		if n < foldBatch {
			return total + max(n, 0), nil
		}
		total += n
	}
}

// RunFold folds at once (what an earlier run left), then every
// FoldInterval in which this replica wrote or changed a record, until ctx
// ends. A replica that writes nothing leaves the deltas to the ones that
// do: whoever folds next takes every replica's, and until then summaries
// count them as deltas. An idle replica sends PostgreSQL nothing. A
// failure (the database away) is logged once per outage; the deltas wait.
func (l *Ledger) RunFold(ctx context.Context) {
	t := time.NewTicker(FoldInterval)
	defer t.Stop()
	failing := false
	for first := true; ; first = false {
		if !first {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			if !l.unfolded.Swap(false) {
				continue
			}
		}
		_, err := l.Fold(ctx)
		if err != nil {
			l.unfolded.Store(true) // try again next time
		}
		switch {
		case err != nil && ctx.Err() == nil && !failing:
			l.log.Warn("billing: folding the rollups failed; summaries read the pending deltas meanwhile", "err", err)
			failing = true
		case err == nil && failing:
			l.log.Info("billing: folding the rollups again")
			failing = false
		}
	}
}
