package demo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/auth"
	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/internal/pgtest"
	"github.com/voxgate/voxgate/tools"
)

// claimPlans takes the plan from the principal, "free" when it has none.
type claimPlans struct{}

func (claimPlans) PlanFor(_ context.Context, p auth.Principal) (string, config.Plan, error) {
	if p.Plan == "" {
		return "free", config.Plan{}, nil
	}
	return p.Plan, config.Plan{}, nil
}

type queryAnswer struct {
	Columns []string `json:"columns"`
	Rows    [][]any  `json:"rows"`
	More    bool     `json:"more_rows"`
	Notice  string   `json:"notice"`
}

func TestQueryMyData(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t, Migrations)
	ts, err := Tools(Params{DB: pool})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := tools.NewRegistry(tools.RegistryParams{Builtins: ts, Plans: []string{"free", "pro"}})
	if err != nil {
		t.Fatal(err)
	}
	e, err := tools.NewExecutor(tools.ExecutorParams{DB: pool, Registry: reg, Plans: claimPlans{},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	n := 0
	ask := func(user, plan string, kind tools.SessionKind, sql string) (tools.Result, error) {
		n++
		args, _ := json.Marshal(map[string]string{"sql": sql})
		return e.Execute(ctx, tools.Call{SessionID: "s-" + user, SessionKind: kind, CallID: fmt.Sprint("q", n),
			Name: "query_my_data", Arguments: args, Principal: auth.Principal{UserID: user, Plan: plan}})
	}
	const runsLastWeek = `SELECT count(*) AS runs, sum(minutes) AS minutes FROM my_activities
		WHERE kind = 'run' AND started_at >= now() - interval '7 days'`
	var wantRuns, wantMinutes int
	if err := pool.QueryRow(ctx, `SELECT count(*), sum(minutes) FROM demo.activities
		WHERE user_id = 'demo' AND kind = 'run' AND started_at >= now() - interval '7 days'`).Scan(&wantRuns, &wantMinutes); err != nil {
		t.Fatal(err)
	}
	if wantRuns == 0 {
		t.Fatal("the seed has no runs in the last week")
	}

	// In voice, on the pro plan: the demo user's own numbers.
	res, err := ask("demo", "pro", tools.KindVoice, runsLastWeek)
	if err != nil {
		t.Fatal(err)
	}
	if res.Error != nil {
		t.Fatalf("tool error: %+v", res.Error)
	}
	var a queryAnswer
	if err := json.Unmarshal(res.Result, &a); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(a.Rows); got != fmt.Sprintf("[[%d %d]]", wantRuns, wantMinutes) {
		t.Fatalf("runs last week: got %s, want %d runs, %d minutes", got, wantRuns, wantMinutes)
	}
	if !strings.Contains(a.Notice, disclaimer) || strings.Contains(res.Output, "SELECT") || strings.Contains(string(res.Result), "SELECT") {
		t.Fatalf("notice or SQL: %+v", res)
	}

	// demo-vegan only rides; the demo user's runs are not theirs to see.
	res, err = ask("demo-vegan", "pro", tools.KindChat, "SELECT kind, count(*) FROM my_activities GROUP BY kind")
	if err != nil || res.Error != nil {
		t.Fatalf("%+v %v", res, err)
	}
	if err := json.Unmarshal(res.Result, &a); err != nil || fmt.Sprint(a.Rows) != "[[ride 56]]" {
		t.Fatalf("demo-vegan sees %v (%v)", a.Rows, err)
	}
	res, err = ask("demo-vegan", "pro", tools.KindChat, "SELECT count(*) FROM my_meals")
	if err != nil || res.Error != nil || !strings.Contains(string(res.Result), `"rows":[[0]]`) {
		t.Fatalf("demo-vegan's meals: %+v %v", res, err)
	}
	// The meals view: two weeks of three meals.
	res, err = ask("demo", "pro", tools.KindChat, "SELECT meal_type, count(*), round(avg(calories)) FROM my_meals GROUP BY 1 ORDER BY 1")
	if err != nil || res.Error != nil || !strings.Contains(string(res.Result), `[["breakfast",14,420],["dinner",14,780],["lunch",14,610]]`) {
		t.Fatalf("demo's meals: %+v %v", res, err)
	}

	// The plan gate: free users are refused the tool.
	_, err = ask("demo", "free", tools.KindChat, runsLastWeek)
	var ae *apierr.Error
	if !errors.As(err, &ae) || ae.Code != apierr.ToolNotAllowed {
		t.Fatalf("free plan: %v", err)
	}
	// The demo's own tables stay the gateway's: the owner reads every row.
	var all int
	if err := pool.QueryRow(ctx, "SELECT count(DISTINCT user_id) FROM demo.activities").Scan(&all); err != nil || all != 2 {
		t.Fatalf("owner sees %d users (%v)", all, err)
	}
}
