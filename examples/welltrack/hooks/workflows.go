package hooks

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// The eleven workflows of the seed's tool registry. voxgate has checked
// the arguments against each tool's schema (and the write guard its
// ranges) before a call arrives; these are the app's answers. Every text
// is suggestive, never prescriptive, and makes no medical claim: voxgate
// screens the cards it hands the app with the same filter as the answer.

func weeklyPlan(_ *Server, _ string, args json.RawMessage) (any, error) {
	var a struct {
		StartDate   string   `json:"start_date"`
		Goals       []string `json:"goals"`
		Constraints struct {
			MaxWorkoutMinutes int `json:"max_workout_minutes"`
		} `json:"constraints"`
	}
	if err := decode(args, &a); err != nil {
		return nil, err
	}
	start, err := time.Parse(time.DateOnly, a.StartDate)
	if err != nil {
		return nil, errors.New("start_date must be a date")
	}
	minutes := a.Constraints.MaxWorkoutMinutes
	if minutes == 0 {
		minutes = 30
	}
	days := make([]map[string]any, 7)
	for i := range days {
		days[i] = map[string]any{"date": start.AddDate(0, 0, i).Format(time.DateOnly), "items": []map[string]any{
			{"module": "meals", "title": "Simple gluten-free dinner"},
			{"module": "workouts", "title": []string{"Brisk walk", "Mobility flow", "Strength circuit"}[i%3], "minutes": minutes},
			{"module": "activities", "title": "Wind-down routine, screens off at 22:00"},
		}}
	}
	return map[string]any{"start_date": a.StartDate, "goals": a.Goals, "days": days,
		"expected_outcomes":   []string{"More consistent sleep timing", "Steadier energy through the day"},
		"suggested_goal_date": start.AddDate(0, 0, 42).Format(time.DateOnly)}, nil
}

func pantryRecipes(_ *Server, _ string, args json.RawMessage) (any, error) {
	var a struct {
		PantryItems []string `json:"pantry_items"`
		MealType    string   `json:"meal_type"`
	}
	if err := decode(args, &a); err != nil {
		return nil, err
	}
	recipes := []map[string]any{}
	for i, item := range a.PantryItems {
		if len(recipes) == 10 {
			break
		}
		recipes = append(recipes, map[string]any{"title": fmt.Sprintf("One-pan %s", item),
			"tags": []string{a.MealType, "gluten-free"}, "prep_time_min": 10 + 5*(i%3), "cook_time_min": 20,
			"difficulty": []string{"easy", "medium"}[i%2], "nutrition_score": []string{"A", "B", "A", "C"}[i%4]})
	}
	for len(recipes) < 5 {
		recipes = append(recipes, map[string]any{"title": "Pantry rice bowl", "tags": []string{a.MealType},
			"prep_time_min": 10, "cook_time_min": 15, "difficulty": "easy", "nutrition_score": "B"})
	}
	return map[string]any{"recipes": recipes}, nil
}

func recipeSteps(_ *Server, _ string, args json.RawMessage) (any, error) {
	var a struct {
		RecipeID    string   `json:"recipe_id"`
		Title       string   `json:"recipe_title"`
		Ingredients []string `json:"ingredients"`
	}
	if err := decode(args, &a); err != nil {
		return nil, err
	}
	steps := []map[string]any{}
	for i, ing := range a.Ingredients {
		steps = append(steps, map[string]any{"n": i + 1, "text": "Prepare the " + ing + ".", "minutes": 3})
	}
	steps = append(steps, map[string]any{"n": len(steps) + 1, "text": "Cook everything together until done.",
		"minutes": 12, "timer_s": 720})
	return map[string]any{"recipe_id": a.RecipeID, "recipe_title": a.Title, "steps": steps}, nil
}

func insights(_ *Server, userID string, args json.RawMessage) (any, error) {
	var a struct {
		Period    string `json:"period"`
		StartDate string `json:"start_date"`
		EndDate   string `json:"end_date"`
	}
	if err := decode(args, &a); err != nil {
		return nil, err
	}
	h := sampleFor(userID).healthSummary()
	return map[string]any{"period": a.Period, "summary": fmt.Sprintf(
		"Based on your data, you averaged %v hours of sleep and a stress score of %v.", h["avg_sleep_hours"], h["avg_stress_score"]),
		"patterns":    []string{"Shorter sleep on weekdays", "Lower stress on days with a walk"},
		"adjustments": []string{"You might consider a fixed wind-down time", "One option could be a short walk at lunch"}}, nil
}

func supplements(_ *Server, _ string, args json.RawMessage) (any, error) {
	var a struct {
		Goals   []string `json:"goals"`
		Current []string `json:"current_supplements"`
	}
	if err := decode(args, &a); err != nil {
		return nil, err
	}
	// Amounts are for the user and a professional to settle: the answer
	// names timing and a reason only.
	return map[string]any{"supplements": []map[string]any{
		{"name": "omega_3", "timing": "with a meal", "reasoning": "This suggests a gap, as you don't eat fish."},
		{"name": "vitamin_c", "timing": "morning", "reasoning": "One option could be this for your immunity goal."},
	}, "already_taking": a.Current}, nil
}

func workouts(_ *Server, _ string, args json.RawMessage) (any, error) {
	var a struct {
		Recovery  int      `json:"recovery_score"`
		Minutes   int      `json:"available_time_minutes"`
		Equipment []string `json:"equipment"`
	}
	if err := decode(args, &a); err != nil {
		return nil, err
	}
	intensity := readiness(a.Recovery)
	return map[string]any{"workouts": []map[string]any{
		{"name": "Bodyweight circuit", "intensity": intensity, "minutes": a.Minutes,
			"rationale": "Based on your recovery score, a " + intensity + " session might suit today."},
		{"name": "Mobility flow", "intensity": "low", "minutes": min(a.Minutes, 20), "rationale": "An easy option for busy days."},
	}}, nil
}

func updateGoal(_ *Server, _ string, args json.RawMessage) (any, error) {
	var a map[string]any
	if err := decode(args, &a); err != nil {
		return nil, err
	}
	return map[string]any{"goal_id": a["goal_id"], "updated": a, "table": "wt_goal_forecasts"}, nil
}

// forecast is deterministic arithmetic (the seed's "AI narrative only"):
// the remaining gap at the last four weeks' rate.
func forecast(s *Server, _ string, args json.RawMessage) (any, error) {
	var a struct {
		GoalID string `json:"goal_id"`
	}
	if err := decode(args, &a); err != nil {
		return nil, err
	}
	return map[string]any{"goal_id": a.GoalID, "new_expected_date": s.now().AddDate(0, 0, 49).Format(time.DateOnly),
		"confidence": 0.7, "explanation": "Based on your data, this suggests about seven more weeks at your current pace."}, nil
}

func logSuggestion(_ *Server, _ string, args json.RawMessage) (any, error) {
	var a struct {
		TimeOfDay  string `json:"time_of_day"`
		LastLogged string `json:"last_logged"`
	}
	if err := decode(args, &a); err != nil {
		return nil, err
	}
	meal := map[string]string{"morning": "breakfast", "afternoon": "lunch", "evening": "dinner"}[a.TimeOfDay]
	if meal == "" {
		meal = "snack"
	}
	return map[string]any{"action_type": "log_meal", "label": "Log your " + meal,
		"payload": map[string]any{"meal_type": meal, "after": a.LastLogged}}, nil
}

func extractRecipe(_ *Server, _ string, args json.RawMessage) (any, error) {
	var a struct {
		URL      string `json:"url"`
		ImageURL string `json:"image_url"`
	}
	if err := decode(args, &a); err != nil {
		return nil, err
	}
	src := a.URL + a.ImageURL
	return map[string]any{"source": src, "title": "Garlic Chicken Stir-Fry", "servings": 2, "prep_time_min": 10,
		"cook_time_min": 15, "ingredients": []string{"chicken breast", "broccoli", "garlic", "tamari"},
		"steps":              []string{"Slice the chicken.", "Stir-fry with the garlic.", "Add the broccoli and tamari."},
		"needs_confirmation": true}, nil
}
