package pgtest

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Querier is what FreshMinute reads the database's clock through: a pool,
// a connection or a transaction.
type Querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// FreshMinute returns once at least room is left of the database's current
// minute, waiting for the next one to begin when less is. Quota's
// per-minute windows are fixed, UTC-aligned minutes on the database's clock
// (quota_clock, which every replica shares), so a test whose requests must
// all fall in one window calls it first, with room for them all on a
// loaded machine.
func FreshMinute(tb testing.TB, db Querier, room time.Duration) {
	tb.Helper()
	if room <= 0 || room > 50*time.Second {
		tb.Fatalf("pgtest: FreshMinute room %s, want more than 0 and at most 50s", room)
	}
	for {
		var left float64
		if err := db.QueryRow(context.Background(),
			`SELECT extract(epoch FROM date_trunc('minute', now()) + interval '1 minute' - now())`).Scan(&left); err != nil {
			tb.Fatalf("pgtest: reading the database's clock: %v", err)
		}
		rest := time.Duration(left * float64(time.Second))
		if rest >= room {
			return
		}
		// measurement window: the database's minute is the limit's window,
		// and nothing signals its start, so the test sleeps until it
		// begins, then reads the clock again.
		time.Sleep(rest + 100*time.Millisecond)
	}
}
