package demo

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/auth"
	"github.com/voxgate/voxgate/tools"
)

func mealCount(t *testing.T, f *fixture, user string) int {
	t.Helper()
	var n int
	if err := f.pool.QueryRow(context.Background(), `SELECT count(*) FROM demo.meals WHERE user_id = $1`, user).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestLogMealRanges(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, false)
	cases := []struct {
		name     string
		calories float64
		protein  float64
		logged   bool
		field    string
	}{
		// A meal is checked per meal (0 to a day's maximum), not against
		// DESIGN §12's daily 500–10,000.
		{"calories at min", 0, 0, true, ""},
		{"a 300 kcal snack", 300, 5, true, ""},
		{"below the daily floor", 499.9, 30, true, ""},
		{"calories at max", 10000, 30, true, ""},
		{"calories below min", -0.1, 30, false, "calories"},
		{"calories above max", 10000.1, 30, false, "calories"},
		{"protein at min", 800, 0, true, ""},
		{"protein at max", 800, 500, true, ""},
		{"protein below min", 800, -0.1, false, "protein_g"},
		{"protein above max", 800, 500.1, false, "protein_g"},
		{"negative calories", -5, 30, false, "calories"},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			user := "meal-" + itoa(i)
			r := f.call(t, user, "log_meal", map[string]any{"name": "Dinner", "meal_type": "dinner",
				"calories": c.calories, "protein_g": c.protein})
			var got struct {
				Logged bool   `json:"logged"`
				Reason string `json:"reason"`
			}
			if err := json.Unmarshal(r.Result, &got); err != nil {
				t.Fatal(err)
			}
			if got.Logged != c.logged {
				t.Fatalf("logged: got %v, want %v (%s)", got.Logged, c.logged, r.Output)
			}
			wantRows := 0
			if c.logged {
				wantRows = 1
			}
			if n := mealCount(t, f, user); n != wantRows {
				t.Fatalf("meals rows: got %d, want %d", n, wantRows)
			}
			if c.logged {
				if len(r.SafetyFlags) != 0 || len(r.DBWrites) != 1 || r.DBWrites[0].DryRun {
					t.Fatalf("got flags %+v writes %+v", r.SafetyFlags, r.DBWrites)
				}
				return
			}
			if got.Reason != "unsafe_value" || len(r.SafetyFlags) != 1 || r.SafetyFlags[0].Type != "unsafe_value" ||
				!r.SafetyFlags[0].Blocked || r.SafetyFlags[0].Field != c.field || len(r.DBWrites) != 0 {
				t.Fatalf("got reason %q flags %+v writes %+v, want one blocking unsafe_value on %s", got.Reason, r.SafetyFlags, r.DBWrites, c.field)
			}
		})
	}
}

func TestLogMealDryRunWritesNothing(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, true)
	r := f.call(t, "dry", "log_meal", map[string]any{"name": "Porridge", "meal_type": "breakfast",
		"calories": 600, "protein_g": 20, "recipe_id": 3})
	var got struct {
		DryRun   bool `json:"dry_run"`
		Logged   bool `json:"logged"`
		Proposal Meal `json:"proposal"`
	}
	if err := json.Unmarshal(r.Result, &got); err != nil {
		t.Fatal(err)
	}
	if !got.DryRun || got.Logged || got.Proposal.Name != "Porridge" || got.Proposal.Calories != 600 {
		t.Fatalf("got %+v", got)
	}
	if len(r.DBWrites) != 1 || !r.DBWrites[0].DryRun || r.DBWrites[0].Table != "demo.meals" {
		t.Fatalf("db_writes: got %+v, want one dry-run insert into meals", r.DBWrites)
	}
	if n := mealCount(t, f, "dry"); n != 0 {
		t.Fatalf("dry run wrote %d meals", n)
	}
	// Ranges are still checked in dry run.
	bad := f.call(t, "dry", "log_meal", map[string]any{"name": "x", "meal_type": "snack", "calories": 20000, "protein_g": 1})
	if len(bad.SafetyFlags) != 1 || len(bad.DBWrites) != 0 {
		t.Fatalf("got flags %+v writes %+v", bad.SafetyFlags, bad.DBWrites)
	}
}

func TestLogMealNeedsConfirmationAndIsNotVoice(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, false)
	args := []byte(`{"name":"Toast","meal_type":"breakfast","calories":600,"protein_g":10}`)
	for _, c := range []tools.Call{
		{SessionID: "s", SessionKind: tools.KindChat, CallID: "a", Name: "log_meal", Arguments: args, Principal: auth.Principal{UserID: "u"}},
		{SessionID: "s", SessionKind: tools.KindVoice, CallID: "b", Name: "log_meal", Arguments: args, Principal: auth.Principal{UserID: "u"}, Confirmed: true},
	} {
		if _, err := f.exec.Execute(context.Background(), c); apierr.CodeOf(err) != apierr.ToolNotAllowed {
			t.Fatalf("%s: got %v, want TOOL_NOT_ALLOWED", c.SessionKind, err)
		}
	}
	if n := mealCount(t, f, "u"); n != 0 {
		t.Fatalf("got %d meals", n)
	}
	bad := f.call(t, "u", "log_meal", map[string]any{"name": "x", "meal_type": "snack", "calories": 600, "protein_g": 1, "recipe_id": 99999})
	if bad.Error == nil || bad.Error.Code != "not_found" {
		t.Fatalf("got %+v, want not_found for an unknown recipe", bad.Error)
	}
}
