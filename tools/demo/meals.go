package demo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/voxgate/voxgate/safety"
	"github.com/voxgate/voxgate/tools"
)

type mealArgs struct {
	Name     string   `json:"name"`
	MealType string   `json:"meal_type"`
	Calories float64  `json:"calories"`
	ProteinG float64  `json:"protein_g"`
	CarbsG   *float64 `json:"carbs_g,omitempty"`
	FatG     *float64 `json:"fat_g,omitempty"`
	RecipeID *int32   `json:"recipe_id,omitempty"`
	EatenAt  string   `json:"eaten_at,omitempty"`
}

// Meal is a logged (or, in dry run, proposed) meal.
type Meal struct {
	ID       int64     `json:"id,omitempty"`
	Name     string    `json:"name"`
	MealType string    `json:"meal_type"`
	Calories float64   `json:"calories"`
	ProteinG float64   `json:"protein_g"`
	CarbsG   *float64  `json:"carbs_g,omitempty"`
	FatG     *float64  `json:"fat_g,omitempty"`
	RecipeID *int32    `json:"recipe_id,omitempty"`
	EatenAt  time.Time `json:"eaten_at"`
}

const insertMealSQL = `INSERT INTO demo.meals (user_id, name, meal_type, calories, protein_g, carbs_g, fat_g, recipe_id, eaten_at, call_id)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id`

// sqlstateForeignKey is a recipe_id that names no recipe.
const sqlstateForeignKey = "23503"

func (d *app) logMealTool() *tools.Tool {
	// calories and protein_g carry no minimum or maximum in the schema on
	// purpose: an implausible value is a safety flag (unsafe_value) the
	// model can explain, not a malformed call.
	return &tools.Tool{
		Name:        "log_meal",
		Description: "Log a meal the user ate to their food diary. Needs the user's confirmation.",
		Parameters: json.RawMessage(`{"type":"object","properties":{
	"name":{"type":"string","minLength":1,"maxLength":120,"description":"What was eaten."},
	"meal_type":{"type":"string","enum":["breakfast","lunch","dinner","snack"]},
	"calories":{"type":"number","description":"Energy in kcal."},
	"protein_g":{"type":"number","description":"Protein in grams."},
	"carbs_g":{"type":"number","minimum":0,"maximum":2000},
	"fat_g":{"type":"number","minimum":0,"maximum":1000},
	"recipe_id":{"type":"integer","minimum":1,"maximum":2147483647,"description":"The recipe this meal was, if any."},
	"eaten_at":{"type":"string","maxLength":40,"description":"RFC 3339 time; default now."}},
"required":["name","meal_type","calories","protein_g"],"additionalProperties":false}`),
		Tier: tools.TierStandard, SafetyLevel: tools.SafetyReview, WritesTo: []string{"demo.meals"}, MaxTokens: 300,
		// DESIGN §12: the executor checks the ranges before the body runs,
		// dry run or not. §12's 500–10,000 kcal is a day's range; one meal
		// is checked against the per-meal range, 0 to a day's maximum.
		Measures: map[string]string{"calories": safety.MealCalories, "protein_g": safety.ProteinG},
		// In dry run the body proposes the row it would insert.
		Proposes: true,
		Run:      d.logMeal,
	}
}

func (d *app) logMeal(ctx context.Context, inv tools.Invocation) (tools.Outcome, error) {
	var a mealArgs
	if err := inv.Decode(&a); err != nil {
		return tools.Outcome{}, err
	}
	now := d.now()
	m := Meal{Name: a.Name, MealType: a.MealType, Calories: a.Calories, ProteinG: a.ProteinG,
		CarbsG: a.CarbsG, FatG: a.FatG, RecipeID: a.RecipeID, EatenAt: now.UTC()}
	if a.EatenAt != "" {
		t, err := time.Parse(time.RFC3339, a.EatenAt)
		if err != nil {
			return tools.Outcome{}, tools.Failf("invalid_time", "eaten_at must be an RFC 3339 time such as 2025-01-31T12:30:00Z.")
		}
		if t.After(now.Add(time.Hour)) || t.Before(now.AddDate(0, 0, -30)) {
			return tools.Outcome{}, tools.Failf("invalid_time", "eaten_at must be within the last 30 days and not in the future.")
		}
		m.EatenAt = t.UTC()
	}

	row, err := json.Marshal(m)
	if err != nil {
		return tools.Outcome{}, err
	}
	if inv.DryRun {
		return tools.Outcome{
			Data:   map[string]any{"logged": false, "dry_run": true, "proposal": m},
			Model:  map[string]any{"logged": false, "dry_run": true, "note": "Dry run: the meal was not saved."},
			Writes: []tools.DBWrite{{Table: "demo.meals", Operation: "insert", Data: row, DryRun: true}},
		}, nil
	}
	err = d.db.QueryRow(ctx, insertMealSQL, inv.UserID, m.Name, m.MealType, m.Calories, m.ProteinG,
		m.CarbsG, m.FatG, m.RecipeID, m.EatenAt, inv.CallID).Scan(&m.ID)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == sqlstateForeignKey {
		return tools.Outcome{}, tools.Failf("not_found", "There is no recipe with id %d.", *a.RecipeID)
	}
	if err != nil {
		return tools.Outcome{}, fmt.Errorf("demo: log meal: %w", err)
	}
	row, _ = json.Marshal(m)
	card, err := tools.NewCard("meal", m)
	if err != nil {
		return tools.Outcome{}, err
	}
	return tools.Outcome{
		Data:   map[string]any{"logged": true, "meal": m},
		Model:  map[string]any{"logged": true, "meal_id": m.ID, "name": m.Name, "calories": m.Calories},
		Cards:  []tools.Card{card},
		Writes: []tools.DBWrite{{Table: "demo.meals", Operation: "insert", Data: row}},
	}, nil
}
