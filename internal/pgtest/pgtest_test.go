package pgtest_test

import (
	"context"
	"testing"
	"testing/fstest"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/voxgate/voxgate/internal/database"
	"github.com/voxgate/voxgate/internal/pgtest"
)

func TestPoolIsMigratedAndIsolated(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, b := pgtest.Pool(t), pgtest.Pool(t)
	v, err := database.SchemaVersion(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	if want := database.Latest(); v != want {
		t.Fatalf("schema version: got %d, want %d", v, want)
	}
	if _, err := a.Exec(ctx, "INSERT INTO user_plans (user_id, plan) VALUES ('u1', 'pro')"); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := b.QueryRow(ctx, "SELECT count(*) FROM user_plans").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("second database sees %d rows of the first, want 0", n)
	}
}

// A test that names an extra migration set gets a database with it applied
// on top of the core set; one that does not, gets neither its schema nor
// its tables.
func TestPoolWithExtraSet(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	set := database.NewSet(database.SetParams{Name: "pgtest_extra", Schema: "pgtest_extra", LockKey: 0x7067746573,
		FS: fstest.MapFS{"0001_t.sql": {Data: []byte("CREATE TABLE pgtest_extra.t (id int); INSERT INTO pgtest_extra.t VALUES (7);")}}})
	with, again, without := pgtest.Pool(t, set), pgtest.Pool(t, set), pgtest.Pool(t)
	for i, p := range []*pgxpool.Pool{with, again} {
		var id int
		if err := p.QueryRow(ctx, "SELECT id FROM pgtest_extra.t").Scan(&id); err != nil || id != 7 {
			t.Fatalf("pool %d with the extra set: got %d, %v, want its row 7", i, id, err)
		}
		if v, err := database.SchemaVersion(ctx, p); err != nil || v != database.Latest() {
			t.Fatalf("pool %d with the extra set: core version %d (%v), want %d", i, v, err, database.Latest())
		}
	}
	var exists bool
	if err := without.QueryRow(ctx, "SELECT to_regnamespace('pgtest_extra') IS NOT NULL").Scan(&exists); err != nil || exists {
		t.Fatalf("pool without the set: schema pgtest_extra exists: %v (%v)", exists, err)
	}
}
