package pgtest_test

import (
	"context"
	"testing"

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
