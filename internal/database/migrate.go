// Package database opens voxgate's PostgreSQL pool and applies migration
// sets: the core schema always, an optional domain's (the demo) when the
// configuration asks for it.
package database

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"regexp"
	"slices"
	"strconv"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/voxgate/voxgate/migrations"
)

// Core is the gateway's own schema, in package migrations. Its history lives
// in public.schema_migrations, as it always has, so replicas of every
// release agree on it.
var Core = NewSet(SetParams{
	Name:    "core",
	FS:      migrations.FS,
	LockKey: 0x766f78676174, // "voxgat"
})

// Migration is one embedded SQL file.
type Migration struct {
	Version int
	Name    string
	SQL     string
}

// SetParams describes a migration set.
type SetParams struct {
	// Name names the set in logs and errors ("core", "demo").
	Name string
	// FS holds the set's NNNN_name.sql files at its root.
	FS fs.FS
	// Schema is the PostgreSQL schema that holds the set's own
	// schema_migrations table, created when missing. Empty means the
	// search path's (public): the core set's, unchanged since its first
	// release. A set's versions count only within the set.
	Schema string
	// LockKey is the session advisory lock replicas take while applying
	// the set, so replicas that start together apply each migration once.
	// Every set has its own, so one set's migrator never waits on another's.
	LockKey int64
}

// Set is a migration set: its files, parsed once on first use, and its own
// version bookkeeping and lock.
type Set struct {
	p    SetParams
	load func() ([]Migration, error)
}

// NewSet describes a set without reading it; its files are parsed on first
// use, once.
func NewSet(p SetParams) *Set {
	return &Set{p: p, load: sync.OnceValues(func() ([]Migration, error) {
		if p.FS == nil {
			return nil, fmt.Errorf("migrations %s: no files", p.Name)
		}
		return load(p.FS)
	})}
}

// Name is the set's name.
func (s *Set) Name() string { return s.p.Name }

// Migrations lists the set's migrations in version order.
func (s *Set) Migrations() ([]Migration, error) {
	ms, err := s.load()
	return slices.Clone(ms), err
}

// Latest is the set's newest migration: the schema this binary needs. It
// reads the files only the first time, so a readiness probe may call it on
// every request.
func (s *Set) Latest() int {
	ms, err := s.load()
	if err != nil || len(ms) == 0 {
		return 0
	}
	return ms[len(ms)-1].Version
}

// Latest is the core set's newest migration.
func Latest() int { return Core.Latest() }

// table is the set's schema_migrations table, quoted for SQL.
func (s *Set) table() string {
	if s.p.Schema == "" {
		return "schema_migrations"
	}
	return pgx.Identifier{s.p.Schema, "schema_migrations"}.Sanitize()
}

var fileRE = regexp.MustCompile(`^(\d{4})_([a-z0-9_]+)\.sql$`)

func load(fsys fs.FS) ([]Migration, error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, err
	}
	var out []Migration
	seen := map[int]string{}
	for _, e := range entries {
		if e.IsDir() || e.Name() == "embed.go" {
			continue
		}
		m := fileRE.FindStringSubmatch(e.Name())
		if m == nil {
			return nil, fmt.Errorf("migrations: %s: name must look like 0001_name.sql", e.Name())
		}
		v, _ := strconv.Atoi(m[1])
		if prev, dup := seen[v]; dup {
			return nil, fmt.Errorf("migrations: %s and %s share version %d", prev, e.Name(), v)
		}
		seen[v] = e.Name()
		body, err := fs.ReadFile(fsys, e.Name())
		if err != nil {
			return nil, err
		}
		out = append(out, Migration{Version: v, Name: m[2], SQL: string(body)})
	}
	slices.SortFunc(out, func(a, b Migration) int { return a.Version - b.Version })
	return out, nil
}

// MigrateResult says what Migrate did to one set.
type MigrateResult struct {
	Set     string // the set's name
	Applied []int  // versions applied by this call
	Schema  int    // the set's newest version in the database afterwards
	Latest  int    // the set's newest version in this binary
	Newer   bool   // the database has migrations of the set this binary does not know
}

// Migrate applies every migration of set the database lacks, each in its own
// transaction, under the set's session advisory lock. A database already
// ahead of this binary is left alone with a warning (expand/contract).
func Migrate(ctx context.Context, pool *pgxpool.Pool, set *Set, log *slog.Logger) (MigrateResult, error) {
	if set == nil || set.p.Name == "" || set.p.LockKey == 0 {
		return MigrateResult{}, errors.New("migrate: the set needs a name and a lock key")
	}
	ms, err := set.load()
	if err != nil {
		return MigrateResult{}, err
	}
	res := MigrateResult{Set: set.p.Name, Latest: set.Latest()}
	fail := func(err error) (MigrateResult, error) {
		return res, fmt.Errorf("migrate %s: %w", set.p.Name, err)
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return fail(err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", set.p.LockKey); err != nil {
		return fail(fmt.Errorf("lock: %w", err))
	}
	defer func() {
		// A fresh context: the unlock must run even when ctx is done, or the
		// pooled connection would keep the lock.
		_, _ = conn.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", set.p.LockKey)
	}()
	if set.p.Schema != "" {
		if _, err := conn.Exec(ctx, "CREATE SCHEMA IF NOT EXISTS "+pgx.Identifier{set.p.Schema}.Sanitize()); err != nil {
			return fail(err)
		}
	}
	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS `+set.table()+` (
		version    integer PRIMARY KEY,
		name       text NOT NULL,
		applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		return fail(err)
	}
	applied, err := appliedVersions(ctx, conn.Conn(), set.table())
	if err != nil {
		return fail(err)
	}
	for _, m := range ms {
		if applied[m.Version] {
			continue
		}
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, m.SQL); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, "INSERT INTO "+set.table()+" (version, name) VALUES ($1, $2)", m.Version, m.Name)
			return err
		})
		if err != nil {
			return fail(fmt.Errorf("%04d_%s: %w", m.Version, m.Name, err))
		}
		applied[m.Version] = true
		res.Applied = append(res.Applied, m.Version)
		log.Info("migration applied", "set", set.p.Name, "version", m.Version, "name", m.Name)
	}
	for v := range applied {
		res.Schema = max(res.Schema, v)
	}
	if res.Schema > res.Latest {
		res.Newer = true
		log.Warn("database schema is newer than this binary; running anyway (expand/contract)",
			"set", set.p.Name, "schema", res.Schema, "binary", res.Latest)
	}
	return res, nil
}

func appliedVersions(ctx context.Context, conn *pgx.Conn, table string) (map[int]bool, error) {
	rows, err := conn.Query(ctx, "SELECT version FROM "+table)
	if err != nil {
		return nil, err
	}
	vs, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		return nil, err
	}
	out := make(map[int]bool, len(vs))
	for _, v := range vs {
		out[int(v)] = true
	}
	return out, nil
}

// SchemaVersion is the database's newest applied core migration, 0 when
// none.
func SchemaVersion(ctx context.Context, db interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}) (int, error) {
	var v int
	err := db.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&v)
	return v, err
}
