package demo

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/voxgate/voxgate/internal/database"
	"github.com/voxgate/voxgate/internal/pgtest"
)

// A database from before the move holds the demo's tables in public,
// created by core migrations 0021 and 0022. Turning the demo on creates
// schema demo beside them and leaves them alone, so a replica of the
// previous release keeps reading them during the rollout.
func TestUpgradeLeavesTheOldPublicTables(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.Pool(t)
	// What 0021 and 0022 created before the move: the same tables, in public.
	for _, name := range []string{"0001_schema.sql", "0002_recipes.sql"} {
		if _, err := pool.Exec(ctx, strings.ReplaceAll(readMigration(t, name), "demo.", "")); err != nil {
			t.Fatalf("old %s: %v", name, err)
		}
	}
	if _, err := pool.Exec(ctx, `INSERT INTO meals (user_id, name, meal_type, calories, protein_g) VALUES ('old', 'toast', 'breakfast', 200, 6)`); err != nil {
		t.Fatal(err)
	}
	before, err := database.SchemaVersion(ctx, pool)
	if err != nil {
		t.Fatal(err)
	}

	res, err := database.Migrate(ctx, pool, Migrations, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Applied) != Migrations.Latest() {
		t.Fatalf("demo set: got %+v, want every migration applied", res)
	}
	var oldMeals, oldRecipes, newRecipes int
	err = pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM public.meals), (SELECT count(*) FROM public.recipes),
		(SELECT count(*) FROM demo.recipes)`).Scan(&oldMeals, &oldRecipes, &newRecipes)
	if err != nil {
		t.Fatal(err)
	}
	if oldMeals != 1 || oldRecipes == 0 || newRecipes != oldRecipes {
		t.Fatalf("got %d old meals, %d old and %d new recipes; want 1 old meal kept and the recipes in both", oldMeals, oldRecipes, newRecipes)
	}
	// The core history is untouched: the version /readyz compares, and the
	// one the previous release's replicas compare, stays where it was.
	if after, err := database.SchemaVersion(ctx, pool); err != nil || after != before {
		t.Fatalf("core schema version: got %d (%v), want %d", after, err, before)
	}

	// The demo tools use schema demo, whatever public holds.
	f := newFixture(t, pool, false)
	s := decodeSearch(t, f.call(t, "old", "search_recipes", map[string]any{"query": "pasta"}))
	if len(s.Recipes) == 0 {
		t.Fatal("search_recipes found nothing in schema demo")
	}
	if r := f.call(t, "old", "log_meal", map[string]any{"name": "soup", "meal_type": "lunch", "calories": 300, "protein_g": 12}); r.Error != nil {
		t.Fatalf("log_meal: %+v", r.Error)
	}
	var newMeals int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM demo.meals WHERE user_id = 'old'`).Scan(&newMeals); err != nil {
		t.Fatal(err)
	}
	if newMeals != 1 {
		t.Fatalf("log_meal wrote %d rows to demo.meals, want 1", newMeals)
	}
}
