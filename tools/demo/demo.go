// Package demo holds the built-in tools of the demo food and wellness app
// (DESIGN §8): search_recipes, get_recipe, get_profile, log_meal,
// recommend_workouts and the open SQL tool query_my_data, over the tables
// of its own migration set (Migrations) in schema demo. The demo is opt-in: cmd/voxgate applies the
// set and registers the tools only when it is enabled. Each tool acts for
// the authenticated user the executor passes in; none takes a user id as an
// argument.
package demo

import (
	"embed"
	"errors"
	"io/fs"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/voxgate/voxgate/internal/database"
	"github.com/voxgate/voxgate/tools"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Migrations is the demo's migration set: its tables in schema demo, with
// their own version history (demo.schema_migrations) and lock, apart from
// the core schema's.
var Migrations = database.NewSet(database.SetParams{
	Name:    "demo",
	FS:      mustSub(migrationFiles, "migrations"),
	Schema:  "demo",
	LockKey: 0x766f78646d6f, // "voxdmo"
})

func mustSub(fsys embed.FS, dir string) fs.FS {
	sub, err := fs.Sub(fsys, dir)
	if err != nil {
		panic(err) // dir is a constant the embed directive above names
	}
	return sub
}

// Params configures the demo tools.
type Params struct {
	DB *pgxpool.Pool
	// Now is the clock for meal times; nil means time.Now.
	Now func() time.Time
}

// Tools returns the demo tools, ready for tools.RegistryParams.Builtins.
func Tools(p Params) ([]*tools.Tool, error) {
	if p.DB == nil {
		return nil, errors.New("demo: Params.DB is required")
	}
	if p.Now == nil {
		p.Now = time.Now
	}
	d := &app{db: p.DB, now: p.Now, maps: &allergenCache{ttl: allergenMapTTL}}
	query, err := d.queryMyDataTool()
	if err != nil {
		return nil, err
	}
	return []*tools.Tool{
		d.searchRecipesTool(),
		d.getRecipeTool(),
		d.getProfileTool(),
		d.logMealTool(),
		d.recommendWorkoutsTool(),
		query,
	}, nil
}

// app is the demo app's data access, shared by its tools.
type app struct {
	db   *pgxpool.Pool
	now  func() time.Time
	maps *allergenCache
}

// allergenMapTTL bounds how stale a cached allergen map may be.
const allergenMapTTL = 30 * time.Second

// disclaimer goes with anything that touches health (DESIGN §8).
const disclaimer = "This isn't medical advice."

//go:generate go run ./internal/seedgen -o migrations/0002_recipes.sql
