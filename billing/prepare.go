package billing

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/voxgate/voxgate/internal/database"
)

// PrepareLegacy readies an existing unpartitioned ledger for migration
// 0092 without blocking its writers (`voxgate ledger prepare`,
// docs/operations.md "Partitioning an existing ledger"): it builds the
// indexes the partitioned parent needs CONCURRENTLY, validates the checks
// older migrations added NOT VALID, and bounds created_at with a CHECK
// added NOT VALID and then VALIDATEd. VALIDATE and CONCURRENTLY take locks
// writers do not wait on; adding the bound is a catalog change under a
// brief lock. With all of it in place the migration attaches the table as
// one partition with no scan and no index build. Its names are the ones
// migration 0092 uses when it does the same for a small ledger itself.
//
// The bound is the first instant of the month after next (UTC): records
// stamped at or after it would be refused by the old table, so the
// migration must run before then. It is run again safely: what is in
// place is kept, and it returns the bound in force. A ledger already
// partitioned needs nothing: ok is false.
func PrepareLegacy(ctx context.Context, pool *pgxpool.Pool, now time.Time) (bound time.Time, ok bool, err error) {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return time.Time{}, false, database.Error("billing: prepare the ledger", err)
	}
	defer conn.Release()
	fail := func(step string, err error) (time.Time, bool, error) {
		return time.Time{}, false, database.Error("billing: prepare the ledger: "+step, err)
	}
	var kind string
	if err := conn.QueryRow(ctx, `SELECT relkind::text FROM pg_class WHERE oid = 'usage_records'::regclass`).Scan(&kind); err != nil {
		return fail("find usage_records", err)
	}
	if kind != "r" {
		return time.Time{}, false, nil
	}
	// Each statement on its own: CONCURRENTLY runs outside a transaction.
	for _, ix := range []struct{ name, def string }{
		{"usage_records_legacy_key", `CREATE UNIQUE INDEX CONCURRENTLY usage_records_legacy_key ON usage_records (kind, session_id, turn_id, created_at)`},
		{"usage_records_legacy_id", `CREATE INDEX CONCURRENTLY usage_records_legacy_id ON usage_records (id)`},
	} {
		// A build that failed half-way leaves an invalid index behind.
		var valid *bool
		if err := conn.QueryRow(ctx, `SELECT (SELECT indisvalid FROM pg_index WHERE indexrelid = to_regclass($1))`, ix.name).Scan(&valid); err != nil {
			return fail(ix.name, err)
		}
		if valid != nil && *valid {
			continue
		}
		if valid != nil {
			if _, err := conn.Exec(ctx, `DROP INDEX CONCURRENTLY `+pgx.Identifier{ix.name}.Sanitize()); err != nil {
				return fail(ix.name, err)
			}
		}
		if _, err := conn.Exec(ctx, ix.def); err != nil {
			return fail(ix.name, err)
		}
	}
	rows, err := conn.Query(ctx, `SELECT conname FROM pg_constraint WHERE conrelid = 'usage_records'::regclass
		AND contype = 'c' AND NOT convalidated AND conname <> 'usage_records_legacy_bound'`)
	if err != nil {
		return fail("list checks", err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return fail("list checks", err)
	}
	for _, n := range names {
		if _, err := conn.Exec(ctx, `ALTER TABLE usage_records VALIDATE CONSTRAINT `+pgx.Identifier{n}.Sanitize()); err != nil {
			return fail("validate "+n, err)
		}
	}
	var def *string
	if err := conn.QueryRow(ctx, `SELECT (SELECT substring(pg_get_constraintdef(oid) FROM $re$'([^']+)'$re$) FROM pg_constraint
		WHERE conrelid = 'usage_records'::regclass AND conname = 'usage_records_legacy_bound')`).Scan(&def); err != nil {
		return fail("read the bound", err)
	}
	if def == nil {
		bound = monthOf(now).AddDate(0, 2, 0)
		// A catalog change, but under the table's exclusive lock: it does
		// not wait in front of writers for longer than lock_timeout.
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, "SET LOCAL lock_timeout = '"+partitionLockTimeout+"'"); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, fmt.Sprintf(`ALTER TABLE usage_records ADD CONSTRAINT usage_records_legacy_bound
				CHECK (created_at < '%s') NOT VALID`, bound.Format(time.RFC3339)))
			return err
		})
		if err != nil {
			return fail("add the bound", err)
		}
	} else if err := conn.QueryRow(ctx, `SELECT $1::timestamptz`, *def).Scan(&bound); err != nil {
		return fail("read the bound", err)
	}
	if _, err := conn.Exec(ctx, `ALTER TABLE usage_records VALIDATE CONSTRAINT usage_records_legacy_bound`); err != nil {
		return fail("validate the bound", err)
	}
	return bound.UTC(), true, nil
}
