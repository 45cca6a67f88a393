package capacity

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// userHZ is the unit of /proc's CPU times: USER_HZ, 100 on every
// architecture Linux ships for (getconf CLK_TCK).
const userHZ = 100

// ProcessCPU is the user and system CPU pid has used so far, from
// /proc/<pid>/stat. An error means the process is gone or /proc is not
// there (not Linux, or another machine's process).
func ProcessCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) may hold spaces and parentheses: the
	// fields that follow start after its last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, errors.New("capacity: /proc stat without a command name")
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 13 {
		return 0, errors.New("capacity: /proc stat too short")
	}
	// f[0] is field 3 (state): utime and stime are fields 14 and 15.
	ut, err1 := strconv.ParseInt(string(f[11]), 10, 64)
	st, err2 := strconv.ParseInt(string(f[12]), 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, err
	}
	return time.Duration(ut+st) * time.Second / userHZ, nil
}

// Backends reads the PostgreSQL side of a run: the CPU of the server
// processes that serve the gateway (its connections, by
// application_name, to the one database), and of the server's own
// background processes (WAL writer, checkpointer, autovacuum), which
// every database on the server shares.
type Backends struct {
	pool       *pgxpool.Pool
	appName    string
	statements bool // pg_stat_statements is there
}

// NewBackends reads the backends of pool's database that appName names.
func NewBackends(ctx context.Context, pool *pgxpool.Pool, appName string) (*Backends, error) {
	b := &Backends{pool: pool, appName: appName}
	err := pool.QueryRow(ctx, `SELECT to_regclass('pg_stat_statements') IS NOT NULL`).Scan(&b.statements)
	return b, err
}

// PGSnapshot is the PostgreSQL counters at one moment.
type PGSnapshot struct {
	// CPU is by process: the gateway's backends and the background ones.
	Gateway, Background map[int]time.Duration
	// Local is false when the server's processes are not on this machine
	// (none of their /proc entries could be read): no CPU is known.
	Local bool
	// Rows is the database's rows inserted, updated and deleted
	// (pg_stat_database): the snapshots' own reads write none.
	Rows int64
	// Statements is pg_stat_statements' calls in the database, the
	// snapshots' own included, or -1 when that extension is not there.
	Statements int64
}

// Snapshot reads the counters now, in one read-only transaction.
func (b *Backends) Snapshot(ctx context.Context) (PGSnapshot, error) {
	s := PGSnapshot{Gateway: map[int]time.Duration{}, Background: map[int]time.Duration{}, Statements: -1}
	tx, err := b.pool.BeginTx(ctx, pgx.TxOptions{AccessMode: pgx.ReadOnly})
	if err != nil {
		return s, err
	}
	defer tx.Rollback(ctx)
	rows, err := tx.Query(ctx, `SELECT pid, datname = current_database() AND application_name = $1
		FROM pg_stat_activity
		WHERE (datname = current_database() AND application_name = $1) OR backend_type <> 'client backend'`, b.appName)
	if err != nil {
		return s, err
	}
	type proc struct {
		pid     int
		gateway bool
	}
	procs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (proc, error) {
		var p proc
		return p, r.Scan(&p.pid, &p.gateway)
	})
	if err != nil {
		return s, err
	}
	for _, p := range procs {
		cpu, err := ProcessCPU(p.pid)
		if err != nil {
			continue // gone since, or not on this machine
		}
		s.Local = true
		if p.gateway {
			s.Gateway[p.pid] = cpu
		} else {
			s.Background[p.pid] = cpu
		}
	}
	if err := tx.QueryRow(ctx, `SELECT tup_inserted + tup_updated + tup_deleted
		FROM pg_stat_database WHERE datname = current_database()`).Scan(&s.Rows); err != nil {
		return s, err
	}
	if b.statements {
		if err := tx.QueryRow(ctx, `SELECT coalesce(sum(calls), 0)::bigint FROM pg_stat_statements
			WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())`).Scan(&s.Statements); err != nil {
			return s, err
		}
	}
	return s, tx.Commit(ctx)
}

// cpuSince is the CPU the processes of now used since then: a process
// born in between counts whole.
func cpuSince(then, now map[int]time.Duration) time.Duration {
	var d time.Duration
	for pid, c := range now {
		d += c - then[pid]
	}
	return d
}

// PGDelta is what PostgreSQL did between two snapshots.
type PGDelta struct {
	Local               bool
	Gateway, Background time.Duration
	Rows                int64
	Statements          int64 // -1: unknown
}

// Since is s's counters less then's.
func (s PGSnapshot) Since(then PGSnapshot) PGDelta {
	d := PGDelta{Local: s.Local && then.Local, Gateway: cpuSince(then.Gateway, s.Gateway),
		Background: cpuSince(then.Background, s.Background), Rows: s.Rows - then.Rows, Statements: -1}
	if s.Statements >= 0 && then.Statements >= 0 {
		d.Statements = s.Statements - then.Statements
	}
	return d
}

// StatsLag is how late PostgreSQL may count a transaction in
// pg_stat_database: a backend flushes its counts at most once a second,
// and one that flushed within the last second waits 10 s more when idle
// (PGSTAT_MIN_INTERVAL, PGSTAT_IDLE_INTERVAL in PostgreSQL 15 and later).
const StatsLag = 11 * time.Second

// Settled waits out StatsLag, so every transaction before it is counted,
// and reads the counters.
func (b *Backends) Settled(ctx context.Context) (PGSnapshot, error) {
	t := time.NewTimer(StatsLag)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return PGSnapshot{}, ctx.Err()
	case <-t.C:
	}
	return b.Snapshot(ctx)
}
