package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/voxgate/voxgate/safety"
	"github.com/voxgate/voxgate/tools"
)

// RecipeCard is what the app renders for a recipe in a list.
type RecipeCard struct {
	ID             int      `json:"id"`
	Title          string   `json:"title"`
	Cuisine        string   `json:"cuisine"`
	TotalMinutes   int      `json:"total_minutes"`
	Difficulty     string   `json:"difficulty"`
	Kcal           int      `json:"kcal"`
	ProteinG       float64  `json:"protein_g"`
	NutritionScore int      `json:"nutrition_score"`
	Diets          []string `json:"diets"`
	Allergens      []string `json:"allergens"`
}

type searchArgs struct {
	Query            string   `json:"query"`
	Diet             string   `json:"diet"`
	MaxMinutes       int      `json:"max_minutes"`
	Cuisine          string   `json:"cuisine"`
	ExcludeAllergens []string `json:"exclude_allergens"`
	Limit            int      `json:"limit"`
}

// searchQuery builds the ranked full-text search, the one statement that
// applies the allergen exclusions. Any word of the query may match (so
// "chicken pasta" still finds chicken dishes); recipes matching every word
// come first, then ts_rank with title > keywords > summary weights. Filters
// are added only when set, so each statement stays as small as the
// question: a prepared statement per shape, no dead clauses for the
// planner. Allergen groups exclude by the seed's derived allergens; terms
// the map does not know exclude any recipe with an ingredient name
// containing them.
//
// The tsqueries are computed once per execution, in a materialized CTE
// read through scalar subqueries (init plans). Inlined, they would be
// evaluated for every row under a generic plan, so PostgreSQL would plan
// every call afresh. Joined to the CTE instead, the match would become a
// join filter that runs after every other filter, including the
// ingredient-name scan for unknown terms. As init plans they are
// parameters of the scan's own filters, which PostgreSQL orders cheapest
// first, and the statement runs on its cached generic plan.
func searchQuery(f searchFilter) (string, []any) {
	args := []any{f.query}
	arg := func(v any) string {
		args = append(args, v)
		return fmt.Sprintf("$%d", len(args))
	}
	var b strings.Builder
	b.WriteString(`WITH q AS MATERIALIZED (
	SELECT CASE WHEN numnode(plainto_tsquery('english', $1)) = 0 THEN NULL
		ELSE replace(plainto_tsquery('english', $1)::text, ' & ', ' | ')::tsquery END AS any_q,
		plainto_tsquery('english', $1) AS all_q)
SELECT r.id, r.title, r.cuisine, r.total_minutes, r.difficulty, r.kcal, r.protein_g::float8,
	r.nutrition_score, r.diets, r.allergens
FROM demo.recipes r
WHERE ((SELECT any_q FROM q) IS NULL OR r.search @@ (SELECT any_q FROM q))`)
	if f.diet != "" {
		b.WriteString("\n\tAND " + arg(f.diet) + " = ANY (r.diets)")
	}
	if f.maxMinutes > 0 {
		b.WriteString("\n\tAND r.total_minutes <= " + arg(f.maxMinutes))
	}
	if f.cuisine != "" {
		b.WriteString("\n\tAND r.cuisine = " + arg(f.cuisine))
	}
	if len(f.groups) > 0 {
		b.WriteString("\n\tAND NOT (r.allergens && " + arg(f.groups) + "::text[])")
	}
	if len(f.unknown) > 0 {
		b.WriteString("\n\tAND NOT EXISTS (SELECT 1 FROM unnest(r.ingredient_names) n, unnest(" + arg(f.unknown) +
			"::text[]) t WHERE strpos(n, t) > 0)")
	}
	b.WriteString(`
ORDER BY ((SELECT any_q FROM q) IS NOT NULL AND r.search @@ (SELECT all_q FROM q)) DESC,
	coalesce(ts_rank(r.search, (SELECT any_q FROM q)), 0) DESC, r.nutrition_score DESC, r.id
LIMIT ` + arg(f.limit))
	return b.String(), args
}

type searchFilter struct {
	query, diet, cuisine string
	maxMinutes, limit    int
	groups, unknown      []string
}

func (d *app) searchRecipesTool() *tools.Tool {
	return &tools.Tool{
		Name: "search_recipes",
		Description: "Search the recipe collection by words (dish, ingredient, cuisine, style) with optional " +
			"diet, time and cuisine filters. The user's allergies and diet from their profile are applied automatically.",
		Parameters: json.RawMessage(`{"type":"object","properties":{
	"query":{"type":"string","maxLength":200,"description":"What to look for, e.g. \"quick vegan curry\" or \"chicken pasta\"."},
	"diet":{"type":"string","enum":["vegetarian","vegan","pescatarian","gluten_free","dairy_free"],"description":"Only recipes fitting this diet. Defaults to the profile's diet."},
	"max_minutes":{"type":"integer","minimum":5,"maximum":600,"description":"Longest total time in minutes."},
	"cuisine":{"type":"string","maxLength":40,"description":"e.g. italian, indian, middle eastern."},
	"exclude_allergens":{"type":"array","items":{"type":"string","maxLength":40},"maxItems":10,"description":"Allergies to exclude in addition to the profile's."},
	"limit":{"type":"integer","minimum":1,"maximum":10,"description":"How many recipes; default 5."}},
"additionalProperties":false}`),
		Voice: true, MaxTokens: 700,
		Run: d.searchRecipes,
	}
}

// searchArgsOf decodes and defaults search_recipes' arguments.
func searchArgsOf(inv tools.Invocation) (searchArgs, error) {
	var a searchArgs
	if err := inv.Decode(&a); err != nil {
		return a, err
	}
	if a.Limit == 0 {
		a.Limit = 5
	}
	return a, nil
}

func normCuisine(c string) string {
	return strings.ReplaceAll(strings.ToLower(strings.TrimSpace(c)), " ", "_")
}

func (d *app) searchRecipes(ctx context.Context, inv tools.Invocation) (tools.Outcome, error) {
	a, err := searchArgsOf(inv)
	if err != nil {
		return tools.Outcome{}, err
	}
	p, err := d.profile(ctx, inv.UserID)
	if err != nil {
		// Without the profile the user's allergies are unknown: refuse
		// rather than guess.
		return tools.Outcome{}, tools.Failf("allergy_check_unavailable",
			"I can't check your allergies right now, so I won't suggest recipes. Please try again shortly.")
	}
	if a.Diet == "" && p.Diet != "none" {
		a.Diet = p.Diet
	}
	applied := appliedFilters{Diet: a.Diet, Allergies: mergeTerms(p.Allergies, a.ExcludeAllergens)}
	ex, err := d.exclusionsFor(ctx, p.Allergies, a.ExcludeAllergens)
	if err != nil {
		return failClosed(applied), nil
	}
	cuisine := normCuisine(a.Cuisine)
	sql, args := searchQuery(searchFilter{query: a.Query, diet: a.Diet, cuisine: cuisine,
		maxMinutes: a.MaxMinutes, limit: a.Limit, groups: ex.groups, unknown: ex.unknown})
	rows, err := d.db.Query(ctx, sql, args...)
	if err != nil {
		return tools.Outcome{}, fmt.Errorf("demo: search recipes: %w", err)
	}
	defer rows.Close()
	cards := []RecipeCard{}
	for rows.Next() {
		var c RecipeCard
		if err := rows.Scan(&c.ID, &c.Title, &c.Cuisine, &c.TotalMinutes, &c.Difficulty, &c.Kcal,
			&c.ProteinG, &c.NutritionScore, &c.Diets, &c.Allergens); err != nil {
			return tools.Outcome{}, fmt.Errorf("demo: search recipes: %w", err)
		}
		cards = append(cards, c)
	}
	if err := rows.Err(); err != nil {
		return tools.Outcome{}, fmt.Errorf("demo: search recipes: %w", err)
	}
	return recipeOutcome(cards, applied)
}

// failClosed is the answer when the allergen map cannot be read for a user
// with restrictions: no recipes at all, and a flag saying why.
func failClosed(applied appliedFilters) tools.Outcome {
	msg := "I can't check allergens right now, so I won't suggest recipes. Please try again shortly."
	return tools.Outcome{
		Data:  map[string]any{"recipes": []RecipeCard{}, "count": 0, "applied": applied, "note": msg},
		Model: map[string]any{"recipes": []any{}, "note": msg},
		Flags: []safety.Flag{{Type: "allergen_check_unavailable", Message: msg, Blocked: true}},
	}
}

// appliedFilters says which of the user's restrictions a search applied.
type appliedFilters struct {
	Allergies []string `json:"allergies"`
	Diet      string   `json:"diet"`
}

// recipeBrief is a recipe as the model reads it.
type recipeBrief struct {
	Difficulty string `json:"difficulty"`
	ID         int    `json:"id"`
	Kcal       int    `json:"kcal"`
	Minutes    int    `json:"minutes"`
	Score      int    `json:"score"`
	Title      string `json:"title"`
}

// searchData is a search's result for the app, and searchModel the
// model's view of it.
type searchData struct {
	Applied appliedFilters `json:"applied"`
	Count   int            `json:"count"`
	Recipes []RecipeCard   `json:"recipes"`
}

type searchModel struct {
	Applied appliedFilters `json:"applied"`
	Note    string         `json:"note,omitempty"`
	Recipes []recipeBrief  `json:"recipes"`
}

func recipeOutcome(cards []RecipeCard, applied appliedFilters) (tools.Outcome, error) {
	// The model gets only what it needs to talk about the results.
	short := make([]recipeBrief, len(cards))
	var out tools.Outcome
	for i := range cards {
		c := &cards[i]
		short[i] = recipeBrief{ID: c.ID, Title: c.Title, Minutes: c.TotalMinutes,
			Difficulty: c.Difficulty, Kcal: c.Kcal, Score: c.NutritionScore}
		card, err := tools.NewCard("recipe", c)
		if err != nil {
			return out, fmt.Errorf("demo: %w", err)
		}
		out.Cards = append(out.Cards, card)
	}
	partial, err := tools.NewCard("recipes", map[string]any{"recipes": cards})
	if err != nil {
		return out, fmt.Errorf("demo: %w", err)
	}
	model := searchModel{Applied: applied, Recipes: short}
	if len(cards) == 0 {
		model.Note = "No recipes matched. Suggest loosening a filter."
	}
	out.Data = searchData{Applied: applied, Count: len(cards), Recipes: cards}
	out.Model, out.Partials = model, []tools.Card{partial}
	return out, nil
}

func mergeTerms(lists ...[]string) []string {
	out := []string{}
	for _, l := range lists {
		for _, t := range l {
			t = strings.ToLower(strings.TrimSpace(t))
			if t != "" && !contains(out, t) {
				out = append(out, t)
			}
		}
	}
	return out
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

func containsFold(s, sub string) bool { return strings.Contains(strings.ToLower(s), sub) }
