package pglocal_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/voxgate/voxgate/internal/pglocal"
)

// TestStartFreshCluster takes the path of a machine with no PostgreSQL
// running: initdb, start, connect, then Start again finds it running.
func TestStartFreshCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a PostgreSQL cluster")
	}
	if _, err := pglocal.Binaries(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	// Not t.TempDir: as root the server runs as postgres, which must be
	// able to reach the directory; os.TempDir is world-traversable.
	dir, err := os.MkdirTemp("", "voxgate-pglocal-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	ctx := context.Background()
	c, err := pglocal.Start(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Stop(context.Background()) })
	if !pglocal.Reachable(ctx, c.URL) {
		t.Fatalf("cluster at port %d does not answer", c.Port)
	}
	info, err := os.Stat(filepath.Join(dir, "password"))
	if err != nil {
		t.Fatal(err)
	}
	if mode := info.Mode().Perm(); mode != 0o600 {
		t.Fatalf("password file mode: got %o, want 600", mode)
	}
	again, err := pglocal.Start(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if again.Port != c.Port {
		t.Fatalf("second Start: got port %d, want the running cluster's %d", again.Port, c.Port)
	}
	// A wrong password must not get in: the cluster is not trust-auth.
	if pglocal.Reachable(ctx, pglocal.WithDatabase(
		"postgres://voxgate:wrong@127.0.0.1:"+strconv.Itoa(c.Port)+"/postgres?sslmode=disable", "postgres")) {
		t.Fatal("a wrong password was accepted")
	}
}

func TestWithDatabase(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"postgres://u:p@h:5432/postgres?sslmode=disable": "postgres://u:p@h:5432/other?sslmode=disable",
		"host=h user=u dbname=postgres":                  "host=h user=u dbname=postgres dbname=other",
	}
	for in, want := range cases {
		if got := pglocal.WithDatabase(in, "other"); got != want {
			t.Errorf("WithDatabase(%q): got %q, want %q", in, got, want)
		}
	}
}
