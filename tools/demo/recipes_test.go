package demo

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/voxgate/voxgate/tools/demo/internal/seed"
)

func TestSeedHasEnoughRealisticRecipes(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, false)
	var n, cuisines, withAllergens, vegan int
	err := f.pool.QueryRow(context.Background(), `SELECT count(*), count(DISTINCT cuisine),
		count(*) FILTER (WHERE cardinality(allergens) > 0), count(*) FILTER (WHERE 'vegan' = ANY (diets))
		FROM demo.recipes WHERE cardinality(ingredients) >= 1 AND cardinality(steps) >= 1 AND kcal > 0`).
		Scan(&n, &cuisines, &withAllergens, &vegan)
	if err != nil {
		t.Fatal(err)
	}
	if n < 200 || cuisines < 15 || withAllergens < 100 || vegan < 30 {
		t.Fatalf("got %d recipes, %d cuisines, %d with allergens, %d vegan; want ≥200, ≥15, ≥100, ≥30", n, cuisines, withAllergens, vegan)
	}
}

func TestSearchFindsRelevantRecipes(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, false)
	cases := []struct {
		query string
		want  string // a title that must be among the results
		first string // when set, the top result's title must contain it
	}{
		{"carbonara", "Spaghetti Carbonara", "Carbonara"},
		{"chicken curry", "Chicken Tikka Masala", ""},
		{"thai green curry", "Thai Green Curry", "Thai Green Curry"},
		{"lentil soup", "Lentil Soup with Lemon", "Lentil"},
		{"tacos", "Tacos al Pastor", "Taco"},
		{"pancakes", "Buttermilk Pancakes", "Pancake"},
		{"salmon", "Pan-Seared Salmon with Greens", "Salmon"},
		{"chickpeas spinach", "Chickpea and Spinach Curry", "Chickpea and Spinach"},
		{"noodle soup with prawns", "Laksa", ""},
	}
	for _, c := range cases {
		t.Run(c.query, func(t *testing.T) {
			s := decodeSearch(t, f.call(t, "anon", "search_recipes", map[string]any{"query": c.query, "limit": 10}))
			var titles []string
			for _, r := range s.Recipes {
				titles = append(titles, r.Title)
			}
			if !slices.Contains(titles, c.want) {
				t.Fatalf("got %v, want %q among them", titles, c.want)
			}
			if c.first != "" && !strings.Contains(titles[0], c.first) {
				t.Fatalf("top result %q, want one containing %q (all: %v)", titles[0], c.first, titles)
			}
		})
	}
}

func TestSearchFilters(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, false)
	f.profile(t, "vegan-user", "vegan")
	cases := []struct {
		name  string
		user  string
		args  map[string]any
		check func(RecipeCard) bool
	}{
		{"diet vegan", "anon", map[string]any{"query": "curry", "diet": "vegan", "limit": 10},
			func(r RecipeCard) bool { return slices.Contains(r.Diets, "vegan") }},
		{"diet gluten_free", "anon", map[string]any{"query": "pasta noodles rice", "diet": "gluten_free", "limit": 10},
			func(r RecipeCard) bool { return !slices.Contains(r.Allergens, "gluten") }},
		{"max minutes", "anon", map[string]any{"query": "chicken", "max_minutes": 20, "limit": 10},
			func(r RecipeCard) bool { return r.TotalMinutes <= 20 }},
		{"profile diet applies by default", "vegan-user", map[string]any{"query": "chicken beef curry", "limit": 10},
			func(r RecipeCard) bool { return slices.Contains(r.Diets, "vegan") }},
		{"cuisine", "anon", map[string]any{"cuisine": "Middle Eastern", "limit": 10},
			func(r RecipeCard) bool { return r.Cuisine == "middle_eastern" }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := decodeSearch(t, f.call(t, c.user, "search_recipes", c.args))
			if len(s.Recipes) == 0 {
				t.Fatal("got no recipes, want some")
			}
			for _, r := range s.Recipes {
				if !c.check(r) {
					t.Errorf("got %q (%d min, diets %v, allergens %v), which the filter should exclude", r.Title, r.TotalMinutes, r.Diets, r.Allergens)
				}
			}
		})
	}
}

func TestSearchExcludesAllergens(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, false)
	f.profile(t, "nut-allergy", "none", "Peanuts", "nuts")
	f.profile(t, "kiwi-allergy", "none", "mango")
	cases := []struct {
		name     string
		user     string
		args     map[string]any
		excluded func(RecipeCard) bool
	}{
		{"profile peanut and nut allergy", "nut-allergy", map[string]any{"query": "satay peanut thai noodles pad", "limit": 10},
			func(r RecipeCard) bool {
				return slices.Contains(r.Allergens, "peanut") || slices.Contains(r.Allergens, "tree_nut")
			}},
		{"argument shellfish", "anon", map[string]any{"query": "prawns shrimp seafood", "exclude_allergens": []string{"shellfish"}, "limit": 10},
			func(r RecipeCard) bool { return slices.Contains(r.Allergens, "shellfish") }},
		{"dairy by another name", "anon", map[string]any{"query": "cheese pasta", "exclude_allergens": []string{"Lactose"}, "limit": 10},
			func(r RecipeCard) bool { return slices.Contains(r.Allergens, "dairy") }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := decodeSearch(t, f.call(t, c.user, "search_recipes", c.args))
			if len(s.Recipes) == 0 {
				t.Fatal("got no recipes, want some safe ones")
			}
			for _, r := range s.Recipes {
				if c.excluded(r) {
					t.Errorf("got %q with allergens %v", r.Title, r.Allergens)
				}
			}
		})
	}
	t.Run("unknown term matches ingredient names", func(t *testing.T) {
		s := decodeSearch(t, f.call(t, "kiwi-allergy", "search_recipes", map[string]any{"query": "mango lassi sticky rice sorbet", "limit": 10}))
		for _, r := range s.Recipes {
			if strings.Contains(strings.ToLower(r.Title), "mango") {
				t.Errorf("got %q for a user allergic to mango", r.Title)
			}
		}
	})
}

// TestAllergenFilterFailsClosed: when the allergen map cannot be read, a
// user with restrictions gets no recipes, and a user without any still
// does.
func TestAllergenFilterFailsClosed(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		breakSQL string
	}{
		{"map emptied", `DELETE FROM demo.allergen_groups`},
		{"map missing", `DROP TABLE demo.allergen_groups`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, nil, false)
			f.profile(t, "allergic", "none", "peanuts")
			if _, err := f.pool.Exec(context.Background(), c.breakSQL); err != nil {
				t.Fatal(err)
			}
			r := f.call(t, "allergic", "search_recipes", map[string]any{"query": "chicken"})
			s := decodeSearch(t, r)
			if len(s.Recipes) != 0 || len(r.Cards) != 0 {
				t.Fatalf("got %d recipes, want none when allergens cannot be checked", len(s.Recipes))
			}
			if len(r.SafetyFlags) != 1 || r.SafetyFlags[0].Type != "allergen_check_unavailable" {
				t.Fatalf("flags: got %+v, want allergen_check_unavailable", r.SafetyFlags)
			}
			if !strings.Contains(r.Output, "can't check allergens") {
				t.Fatalf("output %s should tell the model why", r.Output)
			}
			// Also through the arguments alone.
			s = decodeSearch(t, f.call(t, "anon", "search_recipes", map[string]any{"query": "chicken", "exclude_allergens": []string{"egg"}}))
			if len(s.Recipes) != 0 {
				t.Fatalf("argument allergens: got %d recipes, want none", len(s.Recipes))
			}
			s = decodeSearch(t, f.call(t, "anon", "search_recipes", map[string]any{"query": "chicken"}))
			if len(s.Recipes) == 0 {
				t.Fatal("a user without restrictions should still get recipes")
			}
		})
	}
}

func TestSearchShapesOutputAndCards(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, false)
	r := f.call(t, "anon", "search_recipes", map[string]any{"query": "curry", "limit": 10})
	if len(r.Cards) == 0 || r.Cards[0].Kind != "recipe" || len(r.Partials) != 1 || r.Partials[0].Kind != "recipes" {
		t.Fatalf("got cards %d (%v) and partials %d", len(r.Cards), r.Cards, len(r.Partials))
	}
	for _, key := range []string{`"nutrition_score"`, `"total_minutes"`, `"difficulty"`, `"title"`, `"id"`} {
		if !strings.Contains(string(r.Cards[0].Data), key) {
			t.Errorf("card %s lacks %s", r.Cards[0].Data, key)
		}
	}
	if len(r.Output) > 700*4 {
		t.Fatalf("output is %d bytes, over max_tokens", len(r.Output))
	}
	if strings.Contains(r.Output, "ingredient") || strings.Contains(r.Output, "steps") {
		t.Fatalf("output %s carries whole rows", r.Output)
	}
}

func TestSeedMigrationIsGenerated(t *testing.T) {
	t.Parallel()
	want, err := seed.SQL()
	if err != nil {
		t.Fatal(err)
	}
	got := readMigration(t, "0002_recipes.sql")
	if got != want {
		t.Fatal("tools/demo/migrations/0002_recipes.sql is stale: run go generate ./tools/demo")
	}
}

// TestSearchNonASCIIAllergy: a profile term with a trailing no-break space
// is trimmed as any other space, so "MANGO\u00a0" still excludes mango.
func TestSearchNonASCIIAllergy(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, false)
	f.profile(t, "odd", "none", "MANGO\u00a0")
	s := decodeSearch(t, f.call(t, "odd", "search_recipes", map[string]any{"query": "mango lassi sticky rice sorbet", "limit": 10}))
	if len(s.Recipes) == 0 {
		t.Fatal("got no recipes, want the ones without mango")
	}
	for _, r := range s.Recipes {
		if strings.Contains(strings.ToLower(r.Title), "mango") {
			t.Errorf("got %q for a user allergic to mango", r.Title)
		}
	}
}
