package hooks

import (
	"encoding/json"
	"fmt"
	"strings"
)

// CustomRecipe is the seed's GeneratedRecipe: a recipe made for the user
// from the ingredients they have, in their measurement system, kept among
// their own recipes so retrieve_custom_recipe finds it again.
type CustomRecipe struct {
	ID          string       `json:"id"`
	Name        string       `json:"name"`
	Language    string       `json:"language"`
	Units       string       `json:"measurement_system"`
	Minutes     int          `json:"total_time_minutes"`
	Difficulty  string       `json:"difficulty"`
	Servings    int          `json:"servings"`
	Ingredients []Ingredient `json:"ingredients"`
	Steps       []string     `json:"steps"`
}

// Ingredient is one line of a recipe.
type Ingredient struct {
	Name     string  `json:"name"`
	Quantity float64 `json:"quantity"`
	Unit     string  `json:"unit"`
}

// generateRecipe is the seed's generate_custom_recipe, as a fixed rule
// where the real app asks a model: the main ingredient names the dish,
// each ingredient gets a portion in the user's units, and the steps use
// the user's equipment. An ingredient the user is allergic to is refused
// (the seed's food-safety check), so the model tells the user why.
func generateRecipe(s *Server, userID string, args json.RawMessage) (any, error) {
	var a struct {
		Ingredients []string `json:"ingredients"`
		Minutes     int      `json:"target_time_minutes"`
		Difficulty  string   `json:"difficulty"`
	}
	if err := decode(args, &a); err != nil {
		return nil, err
	}
	if len(a.Ingredients) == 0 {
		return nil, fmt.Errorf("name at least one ingredient")
	}
	p := profileFor(userID)
	for _, i := range a.Ingredients {
		hit, ok := containsAllergen(i, p.Allergies)
		if !ok {
			return nil, fmt.Errorf("the allergen check is unavailable, so no recipe is made")
		}
		if hit != "" {
			return nil, fmt.Errorf("%s is ruled out by the user's %s allergy", i, hit)
		}
	}
	if a.Minutes == 0 {
		a.Minutes = 30
	}
	if a.Difficulty == "" {
		a.Difficulty = "easy"
	}
	r := CustomRecipe{Name: titleCase(a.Ingredients[0]) + " Skillet", Language: p.Language, Units: p.Units,
		Minutes: a.Minutes, Difficulty: a.Difficulty, Servings: 2}
	for _, i := range a.Ingredients {
		q, unit := 200.0, "g"
		if p.Units == "imperial" {
			q, unit = 7, "oz"
		}
		r.Ingredients = append(r.Ingredients, Ingredient{Name: i, Quantity: q, Unit: unit})
	}
	heat := "a skillet on the stovetop"
	r.Steps = []string{
		"Prepare the " + strings.Join(a.Ingredients, ", ") + ".",
		fmt.Sprintf("Cook the %s in %s until done, about %d minutes.", a.Ingredients[0], heat, max(a.Minutes-10, 5)),
		"Add the rest, season to taste and serve.",
	}
	s.mu.Lock()
	r.ID = fmt.Sprintf("cr-%d", len(s.custom[userID])+1)
	s.custom[userID] = append(s.custom[userID], r)
	s.mu.Unlock()
	return r, nil
}

// retrieveRecipe is the seed's retrieve_custom_recipe: one of the user's
// own generated recipes, by id or by a word of its name (the newest that
// matches). Another user's recipe is never found.
func retrieveRecipe(s *Server, userID string, args json.RawMessage) (any, error) {
	var a struct {
		ID    string `json:"recipe_id"`
		Query string `json:"query"`
	}
	if err := decode(args, &a); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	mine := s.custom[userID]
	for i := len(mine) - 1; i >= 0; i-- {
		r := mine[i]
		if (a.ID != "" && r.ID == a.ID) || (a.ID == "" && strings.Contains(strings.ToLower(r.Name), strings.ToLower(a.Query))) {
			return r, nil
		}
	}
	return nil, fmt.Errorf("no saved recipe of yours matches")
}

func titleCase(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
