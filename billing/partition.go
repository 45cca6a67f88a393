package billing

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/database"
)

// The ledger is partitioned by UTC month on created_at (migration 0092,
// docs/billing.md "Partitions"). Each replica creates the coming months'
// partitions at start and then every PartitionInterval, and drops the
// months past the retention that finance has exported, so the DEFAULT
// partition stays empty and old months leave the database whole.
const (
	// PartitionsAhead is how many months after the current one have
	// their partition before any record can need it.
	PartitionsAhead = 2
	// PartitionInterval is how often each replica checks. Months are
	// long: an hour keeps PartitionsAhead months ahead with room to spare
	// through any outage shorter than a month.
	PartitionInterval = time.Hour
	// partitionLockTimeout bounds how long creating or dropping a
	// partition waits for its locks, so that it never queues in front of
	// writers behind a long finance read; it is tried again next time.
	partitionLockTimeout = "5s"
	// partitionLock is migration 0092's advisory lock, which
	// usage_records_add_month takes too: replicas take turns.
	partitionLock = 8535348004352614001
)

// Month is what EnsurePartitions did for one month: Status is
// usage_records_add_month's ("created", "exists", or "default" when the
// DEFAULT partition holds records of that month, which then stay there).
type Month struct {
	Start  time.Time
	Status string
}

// EnsurePartitions creates the partitions of now's UTC month and the
// PartitionsAhead months after it that are missing. Each month is its own
// transaction under the partitions' advisory lock, so replicas that run it
// together create each month once.
func (l *Ledger) EnsurePartitions(ctx context.Context, now time.Time) ([]Month, error) {
	start := monthOf(now)
	out := make([]Month, 0, PartitionsAhead+1)
	for i := range PartitionsAhead + 1 {
		m := Month{Start: start.AddDate(0, i, 0)}
		err := pgx.BeginFunc(ctx, l.pool, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, "SET LOCAL lock_timeout = '"+partitionLockTimeout+"'"); err != nil {
				return err
			}
			return tx.QueryRow(ctx, `SELECT usage_records_add_month($1)`, m.Start).Scan(&m.Status)
		})
		if err != nil {
			return out, database.Error("billing: create the partition of "+m.Start.Format("2006-01"), err)
		}
		out = append(out, m)
	}
	return out, nil
}

// monthOf is the first instant of t's UTC month.
func monthOf(t time.Time) time.Time {
	t = t.UTC()
	return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
}

// RunPartitions keeps the partitions ahead, and drops those past
// retentionMonths (0 keeps every month) that finance exported
// (DropExpired), at once and then every PartitionInterval until ctx ends.
// A month left to the DEFAULT partition is logged each time, for the
// operator (docs/operations.md); a failure is logged and tried again.
func (l *Ledger) RunPartitions(ctx context.Context, retentionMonths int) {
	t := time.NewTicker(PartitionInterval)
	defer t.Stop()
	for {
		months, err := l.EnsurePartitions(ctx, time.Now())
		for _, m := range months {
			if m.Status == "default" {
				l.log.Warn("billing: the DEFAULT ledger partition holds records of a month, which stays there; see docs/operations.md",
					"month", m.Start.Format("2006-01"))
			}
		}
		if err != nil && ctx.Err() == nil {
			l.log.Warn("billing: creating the ledger's partitions failed; trying again later", "err", err)
		}
		if retentionMonths > 0 && err == nil {
			dropped, err := l.DropExpired(ctx, time.Now(), retentionMonths)
			for _, d := range dropped {
				l.log.Info("billing: dropped an exported ledger partition past its retention", "partition", d)
			}
			if err != nil && ctx.Err() == nil {
				l.log.Warn("billing: dropping old ledger partitions failed; trying again later", "err", err)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// partitionsSQL lists the ledger's partitions but DEFAULT with their
// bounds (lo NULL for the legacy partition, which starts at MINVALUE), and
// the months the partition's records span that no export recorded.
const partitionsSQL = `WITH p AS (
	SELECT c.relname AS name,
	       substring(pg_get_expr(c.relpartbound, c.oid) FROM $re$FROM \('([^']+)'\)$re$)::timestamptz AS lo,
	       substring(pg_get_expr(c.relpartbound, c.oid) FROM $re$TO \('([^']+)'\)$re$)::timestamptz AS hi
	FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
	WHERE i.inhparent = 'usage_records'::regclass AND pg_get_expr(c.relpartbound, c.oid) <> 'DEFAULT')
SELECT name, hi FROM p WHERE hi <= $1 ORDER BY hi`

// DropExpired detaches and drops every partition whose months all ended
// before the retention (the retentionMonths whole UTC months before now's
// are kept) and were all exported (`voxgate costs export`, usage_exports),
// and returns their names. A month not exported keeps its partition,
// however old. The rollups are not touched: summaries of a dropped month
// still answer from them, but its records are gone.
func (l *Ledger) DropExpired(ctx context.Context, now time.Time, retentionMonths int) ([]string, error) {
	if retentionMonths <= 0 {
		return nil, nil
	}
	cutoff := monthOf(now).AddDate(0, -retentionMonths, 0)
	rows, err := l.pool.Query(ctx, partitionsSQL, cutoff)
	if err != nil {
		return nil, database.Error("billing: list the ledger's partitions", err)
	}
	type part struct {
		name string
		hi   time.Time
	}
	parts, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (part, error) {
		var p part
		return p, r.Scan(&p.name, &p.hi)
	})
	if err != nil {
		return nil, database.Error("billing: list the ledger's partitions", err)
	}
	var dropped []string
	for _, p := range parts {
		ok, err := l.dropIfExported(ctx, p.name)
		if err != nil {
			return dropped, err
		}
		if ok {
			dropped = append(dropped, p.name)
		}
	}
	return dropped, nil
}

// unexportedSQL counts the months of a partition's records (%[1]s) that no
// export recorded with the count they hold now: a month never exported, or
// one a record reached after its export (a spool replayed late keeps its
// original stamp). It reads the whole partition, which retention does
// once for each expired one.
const unexportedSQL = `WITH c AS (SELECT (date_trunc('month', created_at AT TIME ZONE 'UTC'))::date AS m, count(*) AS n FROM %[1]s GROUP BY 1)
SELECT count(*) FROM c WHERE NOT EXISTS (SELECT 1 FROM usage_exports e WHERE e.month = c.m AND e.records = c.n)`

// dropIfExported detaches and drops the partition name if every month it
// holds records of was exported, in one transaction under the partitions'
// lock, and says whether it did.
func (l *Ledger) dropIfExported(ctx context.Context, name string) (bool, error) {
	ident := pgx.Identifier{name}.Sanitize()
	dropped := false
	err := pgx.BeginFunc(ctx, l.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SET LOCAL lock_timeout = '"+partitionLockTimeout+"'"); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(partitionLock)); err != nil {
			return err
		}
		var missing int64
		if err := tx.QueryRow(ctx, fmt.Sprintf(unexportedSQL, ident)).Scan(&missing); err != nil {
			return err
		}
		if missing > 0 {
			return nil
		}
		// DETACH … CONCURRENTLY cannot run beside a DEFAULT partition;
		// a plain one holds the parent's lock for a catalog change only.
		if _, err := tx.Exec(ctx, `ALTER TABLE usage_records DETACH PARTITION `+ident); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DROP TABLE `+ident); err != nil {
			return err
		}
		dropped = true
		return nil
	})
	if err != nil {
		return false, database.Error("billing: drop the partition "+name, err)
	}
	return dropped, nil
}

// RecordExport records the whole UTC months inside an export's range as
// exported (usage_exports), each with its count of records, which lets
// retention drop them while they hold that many. Only an export of every
// record counts: one filtered by user, kind, mode or model leaves the
// months' other records unexported, and records nothing. It is called once
// the export was written whole, and counts on the primary: when the
// primary holds other than the m.Rows records the export read over its
// range (a standby behind, or a record that arrived since), nothing is
// recorded and the error says to export again.
func (l *Ledger) RecordExport(ctx context.Context, f Filter, m Manifest, format string) ([]time.Time, error) {
	if f.UserID != "" || f.Kind != "" || f.Mode != "" || f.Model != "" {
		return nil, nil
	}
	var months []time.Time
	for s := monthOf(f.From); !s.AddDate(0, 1, 0).After(f.To); s = s.AddDate(0, 1, 0) {
		if !s.Before(f.From) {
			months = append(months, s)
		}
	}
	if len(months) == 0 {
		return nil, nil
	}
	var changed error
	err := pgx.BeginFunc(ctx, l.pool, func(tx pgx.Tx) error {
		var now int64
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM usage_records WHERE created_at >= $1 AND created_at < $2`, f.From, f.To).Scan(&now); err != nil {
			return err
		}
		if now != m.Rows {
			changed = apierr.New(apierr.Conflict,
				fmt.Sprintf("the export read %d records over its range and the ledger holds %d now; no month was recorded as exported, export again", m.Rows, now))
			return nil
		}
		_, err := tx.Exec(ctx, `INSERT INTO usage_exports (month, from_at, to_at, rows, format, records)
		SELECT (m AT TIME ZONE 'UTC')::date, $2, $3, $4, $5,
			(SELECT count(*) FROM usage_records WHERE created_at >= m AND created_at < m + interval '1 month')
		FROM unnest($1::timestamptz[]) AS m
		ON CONFLICT (month) DO UPDATE SET exported_at = now(), from_at = EXCLUDED.from_at, to_at = EXCLUDED.to_at,
			rows = EXCLUDED.rows, format = EXCLUDED.format, records = EXCLUDED.records`, months, f.From, f.To, m.Rows, format)
		return err
	})
	if err != nil {
		return nil, database.Error("billing: record an export", err)
	}
	if changed != nil {
		return nil, changed
	}
	return months, nil
}
