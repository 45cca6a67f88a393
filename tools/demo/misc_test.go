package demo

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// readMigration reads one file of the demo's migration set.
func readMigration(t *testing.T, name string) string {
	t.Helper()
	b, err := migrationFiles.ReadFile("migrations/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestGetRecipe(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, false)
	f.profile(t, "egg-allergy", "none", "eggs")
	r := f.call(t, "egg-allergy", "get_recipe", map[string]any{"id": 1})
	var got Recipe
	if err := json.Unmarshal(r.Result, &got); err != nil {
		t.Fatal(err)
	}
	if got.Title != "Spaghetti Carbonara" || len(got.Ingredients) == 0 || len(got.Steps) == 0 {
		t.Fatalf("got %+v", got)
	}
	if !reflect.DeepEqual(got.AllergenWarning, []string{"egg"}) || len(r.SafetyFlags) != 1 || r.SafetyFlags[0].Type != "allergen_warning" {
		t.Fatalf("got warning %v flags %+v, want egg", got.AllergenWarning, r.SafetyFlags)
	}
	missing := f.call(t, "anon", "get_recipe", map[string]any{"id": 99999})
	if missing.Error == nil || missing.Error.Code != "not_found" {
		t.Fatalf("got %+v, want not_found", missing.Error)
	}
}

func TestGetProfileHidesDisplayNameFromModel(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, false)
	f.profile(t, "u1", "vegetarian", "sesame")
	r := f.call(t, "u1", "get_profile", map[string]any{})
	if strings.Contains(r.Output, "Test Person") {
		t.Fatalf("output %s leaks the display name", r.Output)
	}
	if !strings.Contains(string(r.Result), "Test Person") || !strings.Contains(r.Output, "sesame") || !strings.Contains(r.Output, "vegetarian") {
		t.Fatalf("result %s / output %s", r.Result, r.Output)
	}
	none := f.call(t, "nobody", "get_profile", map[string]any{})
	if !strings.Contains(none.Output, `"exists":false`) {
		t.Fatalf("got %s for a user without a profile", none.Output)
	}
}

func TestRecommendWorkoutsIsDeterministic(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, false)
	f.profile(t, "u1", "none")
	a := f.call(t, "u1", "recommend_workouts", map[string]any{"recovery_score": 80, "minutes": 45})
	b := f.call(t, "u1", "recommend_workouts", map[string]any{"recovery_score": 80, "minutes": 45})
	if a.Output != b.Output {
		t.Fatalf("got %s then %s", a.Output, b.Output)
	}
	cases := []struct {
		name      string
		recovery  int
		level     string
		goal      string
		readiness string
		maxInt    int
		n         int
	}{
		{"exhausted", 5, "advanced", "build_muscle", "rest", 1, 1},
		{"tired", 30, "intermediate", "endurance", "easy", 1, 3},
		{"ok", 55, "beginner", "lose_weight", "moderate", 2, 3},
		{"fresh beginner never gets advanced work", 95, "beginner", "build_muscle", "hard", 3, 2},
		{"fresh advanced", 95, "advanced", "build_muscle", "hard", 3, 3},
	}
	byID := map[string]workout{}
	for _, w := range catalogue {
		byID[w.ID] = w
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := Recommend(c.recovery, 30, c.level, c.goal)
			if p.Readiness != c.readiness || len(p.Workouts) != c.n {
				t.Fatalf("got %s with %d workouts, want %s with %d", p.Readiness, len(p.Workouts), c.readiness, c.n)
			}
			for _, w := range p.Workouts {
				cw := byID[w.ID]
				if cw.Intensity > c.maxInt || cw.MinLevel > levels[c.level] || w.Minutes > 30 {
					t.Errorf("got %s (intensity %d, level %d, %d min)", w.ID, cw.Intensity, cw.MinLevel, w.Minutes)
				}
			}
			if !strings.Contains(p.Note, disclaimer) {
				t.Error("the note must carry the disclaimer")
			}
		})
	}
	if p := Recommend(95, 30, "advanced", "build_muscle"); p.Workouts[0].ID != "heavy" {
		t.Fatalf("got %s first, want heavy for a recovered advanced lifter", p.Workouts[0].ID)
	}
	_ = context.Background
}
