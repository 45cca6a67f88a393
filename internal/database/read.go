package database

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// The read pool (database.read_url, docs/operations.md "Finance on a
// replica") serves finance's reads and nothing else: summaries, listings,
// exports and reconciliation, which may be a few seconds behind and say so
// with the position they read at. Admission, quotas, settlement,
// idempotency and every write use the primary's pool.

// OpenRead opens the read pool to url. Unlike Open it keeps connections to
// a server in recovery (a standby is the point) and makes every transaction
// read only, so no write can land here by mistake. It does not connect: a
// read server that is down must not stop the gateway, whose admission
// never needs it; finance answers 503 until it is back (the caller may
// Ping to warn).
func OpenRead(ctx context.Context, url string, maxConns int32) (*pgxpool.Pool, error) {
	cfg, err := poolConfig(url, maxConns, 0)
	if err != nil {
		return nil, errors.New("database: read_url is not a valid database URL")
	}
	cfg.ConnConfig.RuntimeParams["default_transaction_read_only"] = "on"
	if cfg.ConnConfig.RuntimeParams["application_name"] == "voxgate" {
		cfg.ConnConfig.RuntimeParams["application_name"] = "voxgate-finance"
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("database: read pool: %w", err)
	}
	return pool, nil
}

// Position is how current the data a server shows is.
type Position struct {
	// AsOf is the time up to which every transaction committed on the
	// primary is visible on this server (the primary's clock).
	AsOf time.Time
	// Lag is the server's clock minus AsOf at the read, never negative.
	Lag time.Duration
	// Standby says the server is in recovery, following a primary.
	Standby bool
}

// positionSQL: on a primary, now(), which a statement run after it sees
// everything committed before. On a standby, the latest of three lower
// bounds, each a time before which every commit has been replayed:
//   - the commit time of the last transaction replayed;
//   - when replay has reached the end of the WAL the primary last reported
//     (latest_end_lsn), the primary's clock when it sent that report: this
//     is what keeps as_of fresh while the primary is idle and no commit
//     moves the first bound. The standby asks for such a report after
//     wal_receiver_timeout/2 of silence (30 s by default), so on an idle
//     pair as_of trails by at most that. Reading pg_stat_wal_receiver's
//     detail needs pg_read_all_stats; without it this bound is NULL;
//   - the time of the last checkpoint replayed (a restartpoint), which is
//     never NULL, so a standby that has replayed no commit since it started
//     still has a position.
//
// Not now() when replay has caught up with what was received, though it is
// tempting: a standby cut off from its primary looks caught up (until
// wal_receiver_timeout ends the stream) while the primary commits on, and
// as_of would claim data the standby has never seen.
const positionSQL = `SELECT s.as_of, greatest(0, floor(extract(epoch FROM clock_timestamp() - s.as_of) * 1000))::bigint, s.standby
FROM (SELECT pg_is_in_recovery() AS standby, CASE WHEN NOT pg_is_in_recovery() THEN now() ELSE greatest(
	pg_last_xact_replay_timestamp(),
	(SELECT r.last_msg_send_time FROM pg_stat_wal_receiver r
		WHERE r.status = 'streaming' AND r.latest_end_lsn <= pg_last_wal_replay_lsn()),
	CASE WHEN has_function_privilege('pg_control_checkpoint()', 'EXECUTE') THEN (pg_control_checkpoint()).checkpoint_time END)
	END AS as_of) s`

// ReadPosition reads q's server's position. Call it on the connection (or
// in the transaction, before its first statement takes the snapshot) that
// then reads the data: the data read after it is complete up to AsOf.
func ReadPosition(ctx context.Context, q interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
},
) (Position, error) {
	var p Position
	var asOf *time.Time
	var lagMS int64
	if err := q.QueryRow(ctx, positionSQL).Scan(&asOf, &lagMS, &p.Standby); err != nil {
		return Position{}, Error("database: read position", err)
	}
	if asOf == nil {
		// Only without pg_control_checkpoint's privilege, before any
		// commit was replayed and with the stream down: nothing is known.
		return Position{}, Error("database: read position", fmt.Errorf("the standby has no replay position yet"))
	}
	p.AsOf, p.Lag = asOf.UTC(), time.Duration(lagMS)*time.Millisecond
	return p, nil
}
