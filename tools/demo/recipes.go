package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

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

// searchQuery builds the ranked full-text search. Any word of the query may
// match (so "chicken pasta" still finds chicken dishes); recipes matching
// every word come first, then ts_rank with title > keywords > summary
// weights. Filters are added only when set, so each statement stays as
// small as the question: a prepared statement per shape, no dead clauses
// for the planner. Allergen groups exclude by the seed's derived allergens;
// terms the map does not know exclude any recipe with an ingredient name
// containing them.
//
// The tsqueries are computed once per execution, in a materialized CTE
// read through scalar subqueries (init plans). Inlined, they would be
// evaluated for every row under a generic plan, so PostgreSQL re-planned
// the statement on every call (a custom plan; 0.1–0.2 ms more per call).
// Joined to the CTE instead, the match becomes a join filter that runs
// after every other filter, including the ingredient-name scan for
// unknown terms. As init plans they are parameters of the scan's own
// filters, which PostgreSQL orders cheapest first, and the statement runs
// on its cached generic plan.
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
FROM recipes r
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

// searchStatement is search_recipes as one statement, for the executor's
// fast path (tools.SQLBody): it reads the profile, resolves the allergy
// terms through the allergen map and searches, so a call costs one
// statement beside the tool_calls row instead of a profile read, a
// possible map read and the search. Its first columns repeat on every row
// and say what was applied; a search with no match returns one row with
// found = false, so those columns arrive anyway.
//
// It answers exactly as searchRecipes (the tool's Run) does:
//   - The diet argument, else the profile's diet unless it is "none".
//   - Terms are the profile's allergies, then the argument's (normalised
//     by mergeTerms in Go). The statement returns them as they are (raw),
//     and Collect normalises and deduplicates them with mergeTerms, as Run
//     does. In SQL they are only trimmed and lowercased for matching, where
//     a duplicate does no harm. Groups are what the map gives for them;
//     unknown terms exclude recipes with an ingredient name containing
//     them.
//   - Fail closed: with any term and an empty map, blocked is true and no
//     recipe is returned. A missing map table or profiles table fails the
//     statement, and the executor then answers with Run, which fails
//     closed the same way.
//   - plain is false when a profile term is not ASCII. PostgreSQL's lower()
//     and Go's strings.ToLower agree on ASCII only, so such a call is
//     answered by Run (tools.ErrUseRun) rather than risk a term that
//     normalises differently and matches no ingredient.
//
// Filters on time and cuisine are added only when set, as in searchQuery.
//
// The plan is kept small: the profile is one LEFT JOIN by primary key, and
// nothing before the search aggregates, groups or sorts. PostgreSQL sets up
// every node of a cached plan again on each execution, and with the first
// form of this statement (four aggregates, two hash tables and a sorted
// array_agg to normalise and deduplicate the terms) that set-up was about
// 9% of the machine's CPU under the benchmark's executor load (perf).
func searchStatement(userID string, a searchArgs, cuisine string, terms []string) (string, []any) {
	args := []any{a.Query, userID, terms, a.Diet, a.Limit}
	withMax, withCuisine := 0, 0
	if a.MaxMinutes > 0 {
		args, withMax = append(args, a.MaxMinutes), 1
	}
	if cuisine != "" {
		args, withCuisine = append(args, cuisine), 1
	}
	return searchStatements[withMax][withCuisine], args
}

// searchStatements holds searchStatement's SQL for each set of filters,
// [max_minutes set][cuisine set], built once.
var searchStatements = func() (s [2][2]string) {
	for m := range 2 {
		for c := range 2 {
			s[m][c] = searchStatementSQL(m == 1, c == 1)
		}
	}
	return s
}()

func searchStatementSQL(withMax, withCuisine bool) string {
	n := 5
	arg := func() string {
		n++
		return fmt.Sprintf("$%d", n)
	}
	var b strings.Builder
	b.WriteString(`WITH m AS MATERIALIZED (
	SELECT q.all_q,
		CASE WHEN numnode(q.all_q) = 0 THEN NULL
			ELSE replace(q.all_q::text, ' & ', ' | ')::tsquery END AS any_q,
		coalesce(nullif($4::text, ''), nullif(p.diet, 'none')) AS diet,
		coalesce(p.allergies, '{}') || $3::text[] AS raw,
		coalesce(octet_length(array_to_string(p.allergies, ''))
			= char_length(array_to_string(p.allergies, '')), true) AS plain,
		t.terms,
		ARRAY(SELECT g.allergen FROM allergen_groups g WHERE g.term = ANY (t.terms)) AS groups,
		ARRAY(SELECT u FROM unnest(t.terms) u WHERE NOT EXISTS (SELECT 1 FROM allergen_groups g WHERE g.term = u)) AS unknown,
		cardinality(t.terms) > 0 AND NOT EXISTS (SELECT 1 FROM allergen_groups) AS blocked
	FROM (SELECT plainto_tsquery('english', $1) AS all_q) q
		LEFT JOIN profiles p ON p.user_id = $2
		CROSS JOIN LATERAL (SELECT ARRAY(
			SELECT n FROM (SELECT lower(btrim(x, E' \t\n\r\v\f')) AS n
				FROM unnest(coalesce(p.allergies, '{}') || $3::text[]) x) s
			WHERE n <> '') AS terms) t)
SELECT coalesce(m.diet, ''), m.raw, m.plain, m.blocked, r.id IS NOT NULL,
	coalesce(r.id, 0), coalesce(r.title, ''), coalesce(r.cuisine, ''), coalesce(r.total_minutes, 0),
	coalesce(r.difficulty, ''), coalesce(r.kcal, 0), coalesce(r.protein_g, 0)::float8,
	coalesce(r.nutrition_score, 0), coalesce(r.diets, '{}'), coalesce(r.allergens, '{}')
FROM m LEFT JOIN LATERAL (
	SELECT r.id, r.title, r.cuisine, r.total_minutes, r.difficulty, r.kcal, r.protein_g,
		r.nutrition_score, r.diets, r.allergens,
		(m.any_q IS NOT NULL AND r.search @@ m.all_q) AS all_words,
		coalesce(ts_rank(r.search, m.any_q), 0) AS rank
	FROM recipes r
	WHERE m.plain AND NOT m.blocked
		AND (m.any_q IS NULL OR r.search @@ m.any_q)
		AND (m.diet IS NULL OR m.diet = ANY (r.diets))
		AND NOT (r.allergens && m.groups)
		AND (cardinality(m.unknown) = 0 OR NOT EXISTS (
			SELECT 1 FROM unnest(r.ingredient_names) n, unnest(m.unknown) u WHERE strpos(n, u) > 0))`)
	if withMax {
		b.WriteString("\n\t\tAND r.total_minutes <= " + arg())
	}
	if withCuisine {
		b.WriteString("\n\t\tAND r.cuisine = " + arg())
	}
	b.WriteString(`
	ORDER BY all_words DESC, rank DESC, r.nutrition_score DESC, r.id
	LIMIT $5) r ON true
ORDER BY r.all_words DESC, r.rank DESC, r.nutrition_score DESC, r.id`)
	return b.String()
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
		SQL: &tools.SQLBody{Build: buildSearch, Collect: collectSearch},
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

// buildSearch is the fast path's Build: searchStatement for a call.
func buildSearch(inv tools.Invocation) (string, []any, error) {
	a, err := searchArgsOf(inv)
	if err != nil {
		return "", nil, err
	}
	sql, args := searchStatement(inv.UserID, a, normCuisine(a.Cuisine), mergeTerms(a.ExcludeAllergens))
	return sql, args, nil
}

// collectSearch is the fast path's Collect: searchStatement's rows into the
// same outcome searchRecipes returns.
func collectSearch(rows pgx.Rows, _ tools.Invocation) (tools.Outcome, error) {
	cards := make([]RecipeCard, 0, 10)
	var diet string
	var raw []string
	var plain, blocked bool
	// The first four columns repeat on every row: read them once.
	meta, skip := []any{&diet, &raw, &plain, &blocked}, []any{nil, nil, nil, nil}
	for rows.Next() {
		var c RecipeCard
		var found bool
		if err := rows.Scan(meta[0], meta[1], meta[2], meta[3], &found, &c.ID, &c.Title, &c.Cuisine, &c.TotalMinutes,
			&c.Difficulty, &c.Kcal, &c.ProteinG, &c.NutritionScore, &c.Diets, &c.Allergens); err != nil {
			return tools.Outcome{}, fmt.Errorf("demo: search recipes: %w", err)
		}
		meta = skip
		if found {
			cards = append(cards, c)
		}
	}
	if err := rows.Err(); err != nil {
		return tools.Outcome{}, fmt.Errorf("demo: search recipes: %w", err)
	}
	if !plain {
		return tools.Outcome{}, tools.ErrUseRun
	}
	// The profile's terms, then the argument's, normalised and deduplicated
	// as Run does; plain says PostgreSQL normalised them the same way.
	applied := appliedFilters{Diet: diet, Allergies: mergeTerms(raw)}
	if blocked {
		return failClosed(applied), nil
	}
	return recipeOutcome(cards, applied)
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
// Fields are in key order, so the JSON is what a map would give.
type appliedFilters struct {
	Allergies []string `json:"allergies"`
	Diet      string   `json:"diet"`
}

// recipeBrief is a recipe as the model reads it, fields in key order.
type recipeBrief struct {
	Difficulty string `json:"difficulty"`
	ID         int    `json:"id"`
	Kcal       int    `json:"kcal"`
	Minutes    int    `json:"minutes"`
	Score      int    `json:"score"`
	Title      string `json:"title"`
}

func recipeOutcome(cards []RecipeCard, applied appliedFilters) (tools.Outcome, error) {
	// The model gets only what it needs to talk about the results.
	short := make([]recipeBrief, len(cards))
	out := tools.Outcome{Cards: make([]tools.Card, 0, len(cards))}
	// Each card is encoded once, into one buffer: the cards, the result
	// and the partial share the bytes, which are what encoding the cards
	// again would produce. The partial is {"recipes":[…]}, and each card
	// and the list are slices of it.
	buf := make([]byte, 0, 320*len(cards)+16)
	buf = append(buf, `{"recipes":[`...)
	listStart := len(buf) - 1
	for i := range cards {
		c := &cards[i]
		short[i] = recipeBrief{ID: c.ID, Title: c.Title, Minutes: c.TotalMinutes,
			Difficulty: c.Difficulty, Kcal: c.Kcal, Score: c.NutritionScore}
		if i > 0 {
			buf = append(buf, ',')
		}
		start := len(buf)
		var err error
		if buf, err = appendCard(buf, c); err != nil {
			return out, fmt.Errorf("demo: recipe card: %w", err)
		}
		// The three-index slice keeps a later append from writing into
		// the card's bytes.
		out.Cards = append(out.Cards, tools.Card{Kind: "recipe", Data: buf[start:len(buf):len(buf)]})
	}
	// A card sliced before buf grew keeps its bytes in the old array,
	// which nothing writes to again.
	buf = append(buf, "]}"...)
	list := buf[listStart : len(buf)-1 : len(buf)-1]
	if len(cards) == 0 {
		out.Cards = nil
	}
	data := searchData{Applied: applied, Count: len(cards), Recipes: json.RawMessage(list)}
	model := searchModel{Applied: applied, Recipes: short}
	if len(cards) == 0 {
		model.Note = "No recipes matched. Suggest loosening a filter."
	}
	partial := tools.Card{Kind: "recipes", Data: buf}
	out.Data, out.Model, out.Partials = data, model, []tools.Card{partial}
	return out, nil
}

// searchData is a search's result for the app and searchModel the model's
// view of it. Fields are in key order, so the JSON is what the maps they
// replace gave, without a map's key sorting.
type searchData struct {
	Applied appliedFilters  `json:"applied"`
	Count   int             `json:"count"`
	Recipes json.RawMessage `json:"recipes"`
}

type searchModel struct {
	Applied appliedFilters `json:"applied"`
	Note    string         `json:"note,omitempty"`
	Recipes []recipeBrief  `json:"recipes"`
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
