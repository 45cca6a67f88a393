package demo

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/voxgate/voxgate/internal/auth"
	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/internal/pgtest"
	"github.com/voxgate/voxgate/tools"
)

type allPlans struct{}

func (allPlans) PlanFor(context.Context, auth.Principal) (string, config.Plan, error) {
	return "free", config.Plan{}, nil
}

var fixedNow = time.Date(2025, 3, 10, 12, 0, 0, 0, time.UTC)

type fixture struct {
	pool *pgxpool.Pool
	exec *tools.Executor
	n    int
}

func newFixture(t testing.TB, pool *pgxpool.Pool, dryRun bool) *fixture {
	t.Helper()
	if pool == nil {
		pool = pgtest.Pool(t, Migrations)
	}
	ts, err := Tools(Params{DB: pool, Now: func() time.Time { return fixedNow }})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := tools.NewRegistry(tools.RegistryParams{Builtins: ts, Plans: []string{"free", "pro"}})
	if err != nil {
		t.Fatal(err)
	}
	e, err := tools.NewExecutor(tools.ExecutorParams{DB: pool, Registry: reg, Plans: allPlans{}, DryRun: dryRun,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{pool: pool, exec: e}
}

func (f *fixture) profile(t testing.TB, user, diet string, allergies ...string) {
	t.Helper()
	if allergies == nil {
		allergies = []string{}
	}
	_, err := f.pool.Exec(context.Background(),
		`INSERT INTO demo.profiles (user_id, display_name, diet, allergies, goals, fitness_level)
		 VALUES ($1, 'Test Person', $2, $3, '{"primary":"build_muscle"}', 'intermediate')
		 ON CONFLICT (user_id) DO UPDATE SET diet = EXCLUDED.diet, allergies = EXCLUDED.allergies`,
		user, diet, allergies)
	if err != nil {
		t.Fatal(err)
	}
}

// call runs one tool through the real executor with a fresh call id.
func (f *fixture) call(t testing.TB, user, name string, args any) tools.Result {
	t.Helper()
	f.n++
	b, _ := json.Marshal(args)
	c := tools.Call{SessionID: "sess-" + user, SessionKind: tools.KindChat, CallID: name + "-" + itoa(f.n),
		Name: name, Arguments: b, Principal: auth.Principal{UserID: user}, Confirmed: true}
	r, err := f.exec.Execute(context.Background(), c)
	if err != nil {
		t.Fatalf("%s %s: %v", name, b, err)
	}
	return r
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

type searchResult struct {
	Recipes []RecipeCard   `json:"recipes"`
	Count   int            `json:"count"`
	Applied map[string]any `json:"applied"`
	Note    string         `json:"note"`
}

func decodeSearch(t testing.TB, r tools.Result) searchResult {
	t.Helper()
	if r.Error != nil {
		t.Fatalf("tool error %+v", r.Error)
	}
	var s searchResult
	if err := json.Unmarshal(r.Result, &s); err != nil {
		t.Fatal(err)
	}
	return s
}
