// Package pgtest gives tests a real PostgreSQL database of their own.
//
// The server is found in this order: VOXGATE_TEST_DATABASE_URL (an admin URL,
// e.g. to the "postgres" database), a server on localhost:5432, or a private
// cluster provisioned from the local PostgreSQL binaries in a shared
// temporary directory (kept running for later test runs). Setting
// VOXGATE_TEST_PROVISION=1 skips the first two, to exercise the path a fresh
// machine takes.
//
// Every URL/Pool call creates a fresh database cloned from a template that
// has the core migrations applied, plus any extra sets the test names (the
// demo's, say), and drops it when the test ends. Each combination of sets
// has its own template, built once and reused by later runs while the
// migrations are unchanged. Under CI=true a missing server fails the test;
// elsewhere it skips.
package pgtest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/voxgate/voxgate/internal/database"
	"github.com/voxgate/voxgate/internal/pglocal"
	"github.com/voxgate/voxgate/internal/randid"
)

// server is found once per test binary: every test in a package shares it,
// and each template (by its sets) is checked or built once.
var server struct {
	once     sync.Once
	adminURL string
	err      error

	mu        sync.Mutex
	templates map[string]func() (string, error)
}

// AdminURL is a superuser URL to the server's "postgres" database.
func AdminURL(t testing.TB) string {
	t.Helper()
	server.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		server.adminURL, server.err = findServer(ctx)
	})
	if server.err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("pgtest: no PostgreSQL for tests (CI requires one): %v", server.err)
		}
		t.Skipf("pgtest: no PostgreSQL for tests: %v", server.err)
	}
	return server.adminURL
}

// URL creates a fresh database with the core migrations and those of the
// extra sets applied, and returns its URL. The database is dropped when the
// test ends.
func URL(t testing.TB, extra ...*database.Set) string {
	t.Helper()
	admin := AdminURL(t)
	tpl, err := template(admin, extra)
	if err != nil {
		t.Fatalf("pgtest: template: %v", err)
	}
	return create(t, admin, "TEMPLATE "+pgx.Identifier{tpl}.Sanitize())
}

// template is the name of the template database for the core set plus
// extra, checked or built once per test binary.
func template(admin string, extra []*database.Set) (string, error) {
	sets := append([]*database.Set{database.Core}, extra...)
	key := ""
	for _, s := range sets {
		key += s.Name() + "\n"
	}
	server.mu.Lock()
	if server.templates == nil {
		server.templates = map[string]func() (string, error){}
	}
	get, ok := server.templates[key]
	if !ok {
		get = sync.OnceValues(func() (string, error) {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			return ensureTemplate(ctx, admin, sets)
		})
		server.templates[key] = get
	}
	server.mu.Unlock()
	return get()
}

// EmptyURL creates a fresh database with no migrations applied.
func EmptyURL(t testing.TB) string {
	t.Helper()
	admin := AdminURL(t)
	return create(t, admin, "TEMPLATE template0")
}

// Pool opens a small pool to a fresh database migrated as URL does.
func Pool(t testing.TB, extra ...*database.Set) *pgxpool.Pool {
	t.Helper()
	return NewPool(t, URL(t, extra...), 4)
}

// NewPool opens a pool of at most maxConns to url, closed when the test ends.
func NewPool(t testing.TB, dbURL string, maxConns int32) *pgxpool.Pool {
	t.Helper()
	pool, err := database.Open(context.Background(), dbURL, maxConns, 0)
	if err != nil {
		t.Fatalf("pgtest: open pool: %v", err)
	}
	t.Cleanup(pool.Close)
	return pool
}

func create(t testing.TB, admin, template string) string {
	t.Helper()
	ctx := context.Background()
	name := "voxgate_test_" + randid.New("", 6)
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		t.Fatalf("pgtest: connect: %v", err)
	}
	defer conn.Close(ctx)
	sql := "CREATE DATABASE " + pgx.Identifier{name}.Sanitize() + " " + template
	for attempt := 0; ; attempt++ {
		_, err = conn.Exec(ctx, sql)
		// 55006: the template is in use by another cloner; wait and retry.
		var pgErr *pgconn.PgError
		if err == nil || !errors.As(err, &pgErr) || pgErr.Code != "55006" || attempt == 50 {
			break
		}
		time.Sleep(time.Duration(20+attempt*10) * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("pgtest: create database: %v", err)
	}
	t.Cleanup(func() {
		c, err := pgx.Connect(ctx, admin)
		if err != nil {
			t.Errorf("pgtest: drop %s: %v", name, err)
			return
		}
		defer c.Close(ctx)
		if _, err := c.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
			t.Errorf("pgtest: drop %s: %v", name, err)
		}
	})
	return pglocal.WithDatabase(admin, name)
}

func findServer(ctx context.Context) (string, error) {
	if os.Getenv("VOXGATE_TEST_PROVISION") != "1" {
		if u := os.Getenv("VOXGATE_TEST_DATABASE_URL"); u != "" {
			if !pglocal.Reachable(ctx, u) {
				return "", errors.New("VOXGATE_TEST_DATABASE_URL does not answer")
			}
			return u, nil
		}
		if u := pglocal.FindLocal(ctx); u != "" {
			return u, nil
		}
	}
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("voxgate-pgtest-%d", os.Getuid()))
	unlock, err := pglocal.Lock(dir)
	if err != nil {
		return "", err
	}
	defer unlock()
	c, err := pglocal.Start(ctx, dir)
	if err != nil {
		return "", err
	}
	return c.URL, nil
}

// ensureTemplate creates the template database with sets applied, once per
// content of those sets. Parallel test binaries serialise on an advisory
// lock.
func ensureTemplate(ctx context.Context, admin string, sets []*database.Set) (string, error) {
	h := sha256.New()
	for _, s := range sets {
		ms, err := s.Migrations()
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "set %s\n", s.Name())
		for _, m := range ms {
			fmt.Fprintf(h, "%d %s\n%s\n", m.Version, m.Name, m.SQL)
		}
	}
	name := "voxgate_tpl_" + hex.EncodeToString(h.Sum(nil))[:12]

	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		return "", err
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock(7201)"); err != nil {
		return "", err
	}
	defer conn.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock(7201)")
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists); err != nil {
		return "", err
	}
	// The comment records when a test binary last used the template, so
	// another checkout's cleanup (below) leaves it alone while it is in use.
	touch := "COMMENT ON DATABASE " + pgx.Identifier{name}.Sanitize() + " IS " + quoteLiteral(strconv.FormatInt(time.Now().Unix(), 10))
	if exists {
		_, err := conn.Exec(ctx, touch)
		return name, err
	}
	// Build under a temporary name and rename, so a crash never leaves a
	// half-migrated template behind under the real name.
	tmp := name + "_build"
	_, _ = conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{tmp}.Sanitize()+" WITH (FORCE)")
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{tmp}.Sanitize()+" TEMPLATE template0"); err != nil {
		return "", err
	}
	pool, err := database.Open(ctx, pglocal.WithDatabase(admin, tmp), 2, 0)
	if err != nil {
		return "", err
	}
	for _, s := range sets {
		if _, err = database.Migrate(ctx, pool, s, slog.New(slog.NewTextHandler(io.Discard, nil))); err != nil {
			break
		}
	}
	pool.Close()
	if err != nil {
		return "", fmt.Errorf("migrate template: %w", err)
	}
	if _, err := conn.Exec(ctx, "ALTER DATABASE "+pgx.Identifier{tmp}.Sanitize()+" RENAME TO "+pgx.Identifier{name}.Sanitize()); err != nil {
		return "", err
	}
	if _, err := conn.Exec(ctx, touch); err != nil {
		return "", err
	}
	dropStaleTemplates(ctx, conn, name)
	return name, nil
}

// dropStaleTemplates removes templates of other migrations that no test
// binary has used for an hour. Another checkout (say, a colleague's branch
// or a CI clone) may be cloning from a newer one right now.
func dropStaleTemplates(ctx context.Context, conn *pgx.Conn, keep string) {
	rows, err := conn.Query(ctx, `SELECT datname FROM pg_database
		WHERE datname LIKE 'voxgate\_tpl\_%' AND datname <> $1
		  AND coalesce(substring(shobj_description(oid, 'pg_database') FROM '^[0-9]+$')::bigint, 0) < $2`,
		keep, time.Now().Add(-time.Hour).Unix())
	if err != nil {
		return
	}
	names, _ := pgx.CollectRows(rows, pgx.RowTo[string])
	for _, n := range names {
		_, _ = conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{n}.Sanitize())
	}
}

// quoteLiteral quotes s for SQL (COMMENT takes no parameters).
func quoteLiteral(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
