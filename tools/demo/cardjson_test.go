package demo

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/voxgate/voxgate/tools/demo/internal/seed"
)

// TestAppendCardMatchesMarshal: appendCard writes exactly what json.Marshal
// writes for every seed recipe and for the cases it hands to encoding/json.
func TestAppendCardMatchesMarshal(t *testing.T) {
	t.Parallel()
	recipes, err := seed.Recipes()
	if err != nil {
		t.Fatal(err)
	}
	var cards []RecipeCard
	for _, r := range recipes {
		cards = append(cards, RecipeCard{ID: r.ID, Title: r.Title, Cuisine: r.Cuisine, TotalMinutes: r.Minutes,
			Difficulty: r.Difficulty, Kcal: r.Kcal, ProteinG: r.Protein, NutritionScore: r.Score,
			Diets: r.Diets, Allergens: r.Allergens})
	}
	if len(cards) < 200 || cards[0].Title == "" {
		t.Fatalf("seed gave %d cards, first %+v", len(cards), cards[0])
	}
	odd := []string{"", `quote " and \ backslash`, "<b>Fish & Chips</b>", "tab\tnew\nline\r\b\f\x00\x1f\x7f",
		"Crème brûlée", "line\u2028sep\u2029", "bad \xff utf8", "emoji 🍜"}
	for i, s := range odd {
		cards = append(cards, RecipeCard{ID: -i, Title: s, Cuisine: s, Difficulty: s, Diets: []string{s, "vegan"}, Allergens: nil})
	}
	for _, f := range []float64{0, -0.5, 0.1, 12.3, 999.9, 1e-7, -2e-9, 1e21, 123456789012345678, 1.0 / 3} {
		cards = append(cards, RecipeCard{ProteinG: f, Diets: []string{}, Allergens: []string{}})
	}
	for _, c := range cards {
		want, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		got, err := appendCard([]byte("x"), &c)
		if err != nil {
			t.Fatal(err)
		}
		if string(got[1:]) != string(want) {
			t.Fatalf("appendCard\n got %s\nwant %s", got[1:], want)
		}
	}
	for _, f := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if _, err := appendCard(nil, &RecipeCard{ProteinG: f}); err == nil {
			t.Fatalf("protein %v: got no error, json.Marshal fails", f)
		}
	}
}

// TestRecipeOutcomeEncoding: the struct views and the shared card buffer
// encode as the maps and per-card json.Marshal they replaced.
func TestRecipeOutcomeEncoding(t *testing.T) {
	t.Parallel()
	recipes, err := seed.Recipes()
	if err != nil {
		t.Fatal(err)
	}
	applied := appliedFilters{Diet: "vegan", Allergies: []string{"peanuts", "kiwi"}}
	for _, n := range []int{0, 1, 5, 10, 40} {
		var cards []RecipeCard
		var list []json.RawMessage
		var short []map[string]any
		for _, r := range recipes[:n] {
			c := RecipeCard{ID: r.ID, Title: r.Title, Cuisine: r.Cuisine, TotalMinutes: r.Minutes,
				Difficulty: r.Difficulty, Kcal: r.Kcal, ProteinG: r.Protein, NutritionScore: r.Score,
				Diets: r.Diets, Allergens: r.Allergens}
			cards = append(cards, c)
			b, _ := json.Marshal(c)
			list = append(list, b)
			short = append(short, map[string]any{"id": c.ID, "title": c.Title, "minutes": c.TotalMinutes,
				"difficulty": c.Difficulty, "kcal": c.Kcal, "score": c.NutritionScore})
		}
		if list == nil {
			list = []json.RawMessage{}
			short = []map[string]any{}
		}
		o, err := recipeOutcome(cards, applied)
		if err != nil {
			t.Fatal(err)
		}
		wantModel := map[string]any{"recipes": short, "applied": applied}
		if n == 0 {
			wantModel["note"] = "No recipes matched. Suggest loosening a filter."
		}
		for _, part := range []struct {
			name      string
			got, want any
		}{
			{"data", o.Data, map[string]any{"recipes": list, "count": n, "applied": applied}},
			{"model", o.Model, wantModel},
			{"partial", json.RawMessage(o.Partials[0].Data), map[string]any{"recipes": list}},
		} {
			g, err := json.Marshal(part.got)
			if err != nil {
				t.Fatal(err)
			}
			w, _ := json.Marshal(part.want)
			if string(g) != string(w) {
				t.Fatalf("%d cards, %s:\n got %s\nwant %s", n, part.name, g, w)
			}
		}
		if len(o.Cards) != n {
			t.Fatalf("%d cards: got %d", n, len(o.Cards))
		}
		for i, c := range o.Cards {
			if c.Kind != "recipe" || string(c.Data) != string(list[i]) {
				t.Fatalf("card %d: got %s %s, want recipe %s", i, c.Kind, c.Data, list[i])
			}
		}
	}
}
