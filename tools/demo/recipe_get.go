package demo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/voxgate/voxgate/safety"
	"github.com/voxgate/voxgate/tools"
)

// Recipe is a whole recipe, as get_recipe returns it.
type Recipe struct {
	RecipeCard
	Summary     string   `json:"summary"`
	Course      string   `json:"course"`
	Servings    int      `json:"servings"`
	Ingredients []string `json:"ingredients"`
	Steps       []string `json:"steps"`
	Tags        []string `json:"tags"`
	CarbsG      float64  `json:"carbs_g"`
	FatG        float64  `json:"fat_g"`
	FiberG      float64  `json:"fiber_g"`
	// AllergenWarning names the user's allergens this recipe contains.
	AllergenWarning []string `json:"allergen_warning,omitempty"`
}

const getRecipeSQL = `SELECT id, title, cuisine, total_minutes, difficulty, kcal, protein_g::float8,
	nutrition_score, diets, allergens, summary, course, servings, ingredients, steps, tags,
	carbs_g::float8, fat_g::float8, fiber_g::float8, ingredient_names
FROM demo.recipes WHERE id = $1`

func (d *app) getRecipeTool() *tools.Tool {
	return &tools.Tool{
		Name:        "get_recipe",
		Description: "Get one recipe's ingredients, steps and nutrition by its id (from search_recipes).",
		Parameters: json.RawMessage(`{"type":"object","properties":{
	"id":{"type":"integer","minimum":1,"maximum":2147483647,"description":"The recipe id."}},
"required":["id"],"additionalProperties":false}`),
		Voice: true, MaxTokens: 1200,
		Run: d.getRecipe,
	}
}

func (d *app) getRecipe(ctx context.Context, inv tools.Invocation) (tools.Outcome, error) {
	var a struct {
		ID int32 `json:"id"`
	}
	if err := inv.Decode(&a); err != nil {
		return tools.Outcome{}, err
	}
	var r Recipe
	var names []string
	err := d.db.QueryRow(ctx, getRecipeSQL, a.ID).Scan(&r.ID, &r.Title, &r.Cuisine, &r.TotalMinutes,
		&r.Difficulty, &r.Kcal, &r.ProteinG, &r.NutritionScore, &r.Diets, &r.Allergens, &r.Summary,
		&r.Course, &r.Servings, &r.Ingredients, &r.Steps, &r.Tags, &r.CarbsG, &r.FatG, &r.FiberG, &names)
	if errors.Is(err, pgx.ErrNoRows) {
		return tools.Outcome{}, tools.Failf("not_found", "There is no recipe with id %d.", a.ID)
	}
	if err != nil {
		return tools.Outcome{}, fmt.Errorf("demo: get recipe: %w", err)
	}
	out := tools.Outcome{}
	// Asking for a recipe by id bypasses the search filter, so say plainly
	// when it holds something the user is allergic to.
	p, perr := d.profile(ctx, inv.UserID)
	var ex exclusions
	if perr == nil {
		ex, perr = d.exclusionsFor(ctx, p.Allergies)
	}
	switch {
	case perr != nil:
		out.Flags = append(out.Flags, safety.Flag{Type: "allergen_check_unavailable",
			Message: "Allergens could not be checked against your profile."})
	default:
		r.AllergenWarning = clashes(r.Allergens, names, ex)
		if len(r.AllergenWarning) > 0 {
			out.Flags = append(out.Flags, safety.Flag{Type: "allergen_warning",
				Message: fmt.Sprintf("This recipe contains %v, which your profile lists as an allergy.", r.AllergenWarning)})
		}
	}
	card, err := tools.NewCard("recipe_detail", r)
	if err != nil {
		return out, err
	}
	model := map[string]any{"id": r.ID, "title": r.Title, "minutes": r.TotalMinutes, "servings": r.Servings,
		"difficulty": r.Difficulty, "ingredients": r.Ingredients, "steps": r.Steps,
		"per_serving": map[string]any{"kcal": r.Kcal, "protein_g": r.ProteinG, "carbs_g": r.CarbsG, "fat_g": r.FatG},
		"allergens":   r.Allergens}
	if len(r.AllergenWarning) > 0 {
		model["allergen_warning"] = r.AllergenWarning
	}
	out.Data, out.Model, out.Cards = r, model, []tools.Card{card}
	return out, nil
}

// clashes lists the recipe's allergen groups and ingredient names that the
// user's exclusions rule out.
func clashes(allergens, names []string, ex exclusions) []string {
	var out []string
	for _, a := range allergens {
		if contains(ex.groups, a) {
			out = append(out, a)
		}
	}
	for _, t := range ex.unknown {
		for _, n := range names {
			if containsFold(n, t) && !contains(out, n) {
				out = append(out, n)
			}
		}
	}
	return out
}
