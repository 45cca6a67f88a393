package database_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/jackc/pgx/v5"

	"github.com/voxgate/voxgate/internal/database"
	"github.com/voxgate/voxgate/internal/pgtest"
)

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// Three replicas starting together against a fresh database apply each
// migration exactly once.
func TestConcurrentMigratorsApplyOnce(t *testing.T) {
	t.Parallel()
	url := pgtest.EmptyURL(t)
	ms, err := database.Core.Migrations()
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
			results[i], errs[i] = database.Migrate(context.Background(), pool, database.Core, quiet())
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
	res, err := database.Migrate(ctx, pool, database.Core, slog.New(slog.NewTextHandler(&logs, nil)))
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
	ms, _ := database.Core.Migrations()
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
	res, err := database.Migrate(ctx, pool, database.Core, quiet())
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

// testSet is a set of its own in schema name, as a domain package declares.
func testSet(name string, files fstest.MapFS) *database.Set {
	return database.NewSet(database.SetParams{Name: name, FS: files, Schema: name, LockKey: 0x7465737400})
}

// A second set keeps its history in its own schema: the core history and
// the version /readyz compares stay as they were, and the set migrates up
// and warns about a newer schema on its own.
func TestSetKeepsItsOwnHistory(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.Pool(t)
	files := fstest.MapFS{
		"0001_things.sql": {Data: []byte("CREATE TABLE extra.things (id int PRIMARY KEY);")},
		"0002_seed.sql":   {Data: []byte("INSERT INTO extra.things VALUES (1), (2);")},
	}
	set := testSet("extra", files)
	res, err := database.Migrate(ctx, pool, set, quiet())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Applied, []int{1, 2}) || res.Schema != 2 || res.Latest != 2 || res.Set != "extra" {
		t.Fatalf("got %+v, want versions 1 and 2 applied to set extra", res)
	}
	var things, history int
	if err := pool.QueryRow(ctx, "SELECT (SELECT count(*) FROM extra.things), (SELECT count(*) FROM extra.schema_migrations)").Scan(&things, &history); err != nil {
		t.Fatal(err)
	}
	if things != 2 || history != 2 {
		t.Fatalf("got %d things and %d history rows, want 2 and 2", things, history)
	}
	if v, err := database.SchemaVersion(ctx, pool); err != nil || v != database.Latest() {
		t.Fatalf("core schema version: got %d (%v), want %d", v, err, database.Latest())
	}

	// The next release of the set adds a migration: only it runs.
	files["0003_more.sql"] = &fstest.MapFile{Data: []byte("INSERT INTO extra.things VALUES (3);")}
	if res, err := database.Migrate(ctx, pool, testSet("extra", files), quiet()); err != nil || !slices.Equal(res.Applied, []int{3}) {
		t.Fatalf("got %+v, %v, want only version 3 applied", res, err)
	}
	// The release before it starts against that schema with a warning.
	delete(files, "0003_more.sql")
	var logs bytes.Buffer
	res, err = database.Migrate(ctx, pool, testSet("extra", files), slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil || !res.Newer || len(res.Applied) != 0 || res.Schema != 3 {
		t.Fatalf("got %+v, %v, want Newer at 3 with nothing applied", res, err)
	}
	if !strings.Contains(logs.String(), "set=extra") {
		t.Fatalf("the warning does not name the set:\n%s", logs.String())
	}
}

// A set whose migration fails records nothing of it, and says which set and
// file failed.
func TestSetFailureNamesTheFile(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.Pool(t)
	set := testSet("broken", fstest.MapFS{
		"0001_ok.sql":  {Data: []byte("CREATE TABLE broken.ok (id int);")},
		"0002_bad.sql": {Data: []byte("CREATE TABLE broken.bad (id nosuchtype);")},
	})
	_, err := database.Migrate(ctx, pool, set, quiet())
	if err == nil || !strings.Contains(err.Error(), "migrate broken: 0002_bad") {
		t.Fatalf("got %v, want an error naming set broken and 0002_bad", err)
	}
	var versions []int32
	rows, _ := pool.Query(ctx, "SELECT version FROM broken.schema_migrations ORDER BY 1")
	versions, err = pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil || !slices.Equal(versions, []int32{1}) {
		t.Fatalf("recorded versions: got %v (%v), want [1]", versions, err)
	}
}

// The core set holds no demo table: a deployment without the demo has no
// recipes, in public or anywhere.
func TestCoreHasNoDemoTables(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	var tables []string
	rows, _ := pool.Query(context.Background(), `SELECT table_schema || '.' || table_name FROM information_schema.tables
		WHERE table_name IN ('recipes', 'profiles', 'meals', 'allergen_groups') OR table_schema = 'demo'`)
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	if len(tables) != 0 {
		t.Fatalf("core migrations created %v", tables)
	}
}

// Latest reads the embedded files once, not on every call: /readyz calls it
// on every probe.
func TestLatestParsesOnce(t *testing.T) {
	ms, err := database.Core.Migrations()
	if err != nil || len(ms) == 0 {
		t.Fatalf("core migrations: %d, %v", len(ms), err)
	}
	if got, want := database.Latest(), ms[len(ms)-1].Version; got != want {
		t.Fatalf("Latest: got %d, want %d", got, want)
	}
	if n := testing.AllocsPerRun(100, func() { _ = database.Latest() }); n != 0 {
		t.Fatalf("Latest allocates %.0f times per call, want 0 (no parsing per call)", n)
	}
}

func BenchmarkLatest(b *testing.B) {
	for b.Loop() {
		_ = database.Latest()
	}
}
