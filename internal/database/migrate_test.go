package database_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/voxgate/voxgate/internal/database"
	"github.com/voxgate/voxgate/internal/pgtest"
)

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// Three replicas starting together against a fresh database apply each
// migration exactly once.
func TestConcurrentMigratorsApplyOnce(t *testing.T) {
	t.Parallel()
	url := pgtest.EmptyURL(t)
	ms, err := database.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	results := make([]database.MigrateResult, 3)
	errs := make([]error, 3)
	for i := range 3 {
		pool := pgtest.NewPool(t, url, 2)
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = database.Migrate(context.Background(), pool, quiet())
		}()
	}
	wg.Wait()
	applied := 0
	for i := range 3 {
		if errs[i] != nil {
			t.Fatalf("migrator %d: %v", i, errs[i])
		}
		applied += len(results[i].Applied)
	}
	if applied != len(ms) {
		t.Fatalf("migrations applied across three migrators: got %d, want %d (each once)", applied, len(ms))
	}
	pool := pgtest.NewPool(t, url, 1)
	var rows int
	if err := pool.QueryRow(context.Background(), "SELECT count(*) FROM schema_migrations").Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if rows != len(ms) {
		t.Fatalf("schema_migrations rows: got %d, want %d", rows, len(ms))
	}
}

// A binary starts against a schema one migration newer than it knows, with a
// warning, and applies nothing.
func TestNewerSchemaWarns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.Pool(t)
	next := database.Latest() + 1
	if _, err := pool.Exec(ctx, "INSERT INTO schema_migrations (version, name) VALUES ($1, 'from_the_future')", next); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	res, err := database.Migrate(ctx, pool, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatalf("migrate against a newer schema: %v", err)
	}
	if !res.Newer || len(res.Applied) != 0 || res.Schema != next {
		t.Fatalf("got %+v, want Newer, nothing applied, schema %d", res, next)
	}
	if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), "newer") {
		t.Fatalf("no warning logged; logs:\n%s", logs.String())
	}
}

// An older schema is migrated up: only the missing migrations run.
func TestOlderSchemaMigratesUp(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := pgtest.EmptyURL(t)
	pool := pgtest.NewPool(t, url, 2)
	ms, _ := database.Migrations()
	// Bring the database to the first migration only, as an old release would.
	if _, err := pool.Exec(ctx, `CREATE TABLE schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, ms[0].SQL); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, "INSERT INTO schema_migrations (version, name) VALUES ($1, $2)", ms[0].Version, ms[0].Name); err != nil {
		t.Fatal(err)
	}
	res, err := database.Migrate(ctx, pool, quiet())
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(res.Applied), len(ms)-1; got != want {
		t.Fatalf("applied: got %d, want %d", got, want)
	}
	if res.Schema != database.Latest() {
		t.Fatalf("schema: got %d, want %d", res.Schema, database.Latest())
	}
}

func TestOpenHidesPassword(t *testing.T) {
	t.Parallel()
	_, err := database.Open(context.Background(), "postgres://u:hunter2@127.0.0.1:1/db?connect_timeout=1&sslmode=disable", 1, 0)
	if err == nil {
		t.Fatal("got no error connecting to port 1")
	}
	if strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("error leaks the password: %v", err)
	}
	_, err = database.Open(context.Background(), "postgres://u:hunter2@%zz", 1, 0)
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("bad URL: got %v, want an error without the password", err)
	}
}
