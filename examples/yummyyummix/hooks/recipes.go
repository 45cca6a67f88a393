package hooks

import (
	"encoding/json"
	"slices"
	"strings"
)

// Recipe is one recipe of the catalogue; RecipeCard is what an answer
// shows of it (the seed's RecipeCard).
type Recipe struct {
	RecipeCard
	Ingredients []string `json:"-"`
	Diets       []string `json:"-"` // diets it suits
}

// RecipeCard is a search result as the app renders it.
type RecipeCard struct {
	ID         string `json:"id"`
	Title      string `json:"title"`
	Cuisine    string `json:"cuisine"`
	Minutes    int    `json:"total_time_minutes"`
	Difficulty string `json:"difficulty"`
}

// catalogue is the sample of the recipes table.
var catalogue = []Recipe{
	{RecipeCard{"r-101", "Lemon Pasta with Peas", "italian", 20, "easy"}, []string{"pasta", "lemon", "peas", "parmesan", "butter"}, []string{"vegetarian"}},
	{RecipeCard{"r-102", "Pasta al Pomodoro", "italian", 25, "easy"}, []string{"pasta", "tomato", "garlic", "basil", "olive oil"}, []string{"vegetarian", "vegan"}},
	{RecipeCard{"r-103", "Peanut Noodle Bowl", "thai", 15, "easy"}, []string{"rice noodles", "peanut butter", "lime", "cucumber"}, []string{"vegetarian", "vegan"}},
	{RecipeCard{"r-104", "Chicken Tinga Tacos", "mexican", 35, "medium"}, []string{"chicken", "chipotle", "tomato", "onion", "tortillas"}, nil},
	{RecipeCard{"r-105", "Black Bean Enchiladas", "mexican", 45, "medium"}, []string{"black beans", "tortillas", "cheese", "enchilada sauce"}, []string{"vegetarian"}},
	{RecipeCard{"r-106", "Shrimp Fried Rice", "chinese", 20, "easy"}, []string{"rice", "shrimp", "egg", "soy sauce", "scallion"}, nil},
	{RecipeCard{"r-107", "Creamy Mushroom Pasta", "italian", 30, "medium"}, []string{"pasta", "mushrooms", "cream", "garlic", "parmesan"}, []string{"vegetarian"}},
	{RecipeCard{"r-108", "Satay Chicken Skewers", "thai", 40, "medium"}, []string{"chicken", "peanuts", "coconut milk", "curry paste"}, nil},
	{RecipeCard{"r-109", "Lentil Soup", "mediterranean", 50, "easy"}, []string{"lentils", "carrot", "celery", "onion", "cumin"}, []string{"vegetarian", "vegan", "gluten_free"}},
	{RecipeCard{"r-110", "Pesto Pasta Salad", "italian", 20, "easy"}, []string{"pasta", "basil", "pine nuts", "parmesan", "cherry tomato"}, []string{"vegetarian"}},
}

// allergenGroups is the sample of allergen_groups: what each allergy
// rules out. An allergy the map does not know fails closed (no recipes).
var allergenGroups = map[string][]string{
	"peanuts":   {"peanut", "satay"},
	"tree_nuts": {"pine nuts", "almond", "walnut", "cashew"},
	"shellfish": {"shrimp", "prawn", "crab"},
	"dairy":     {"parmesan", "butter", "cream", "cheese", "milk"},
	"gluten":    {"pasta", "tortillas", "soy sauce", "noodles"},
	"egg":       {"egg"},
}

// maxResults is the seed's search limit.
const maxResults = 10

// containsAllergen says whether ingredient falls in one of allergies'
// groups; ok is false when an allergy is not in the map.
func containsAllergen(ingredient string, allergies []string) (hit string, ok bool) {
	ingredient = strings.ToLower(ingredient)
	for _, a := range allergies {
		words, known := allergenGroups[a]
		if !known {
			return "", false
		}
		for _, w := range words {
			if strings.Contains(ingredient, w) {
				return a, true
			}
		}
	}
	return "", true
}

// searchRecipes is the seed's search_recipes: the catalogue's recipes
// matching the query (title, cuisine or an ingredient), within the time
// and cuisine asked, suiting the user's diet, and never one holding an
// ingredient of the user's allergies. No match is an empty list, which
// the model answers with the deterministic fallback of its instructions.
func searchRecipes(_ *Server, userID string, args json.RawMessage) (any, error) {
	var a struct {
		Query      string `json:"query"`
		Cuisine    string `json:"cuisine"`
		MaxMinutes int    `json:"max_time_minutes"`
		Limit      int    `json:"limit"`
	}
	if err := decode(args, &a); err != nil {
		return nil, err
	}
	if a.Limit <= 0 || a.Limit > maxResults {
		a.Limit = maxResults
	}
	p := profileFor(userID)
	found := []RecipeCard{}
	for _, r := range catalogue {
		switch {
		case !matches(r, strings.ToLower(a.Query)),
			a.Cuisine != "" && !strings.EqualFold(a.Cuisine, r.Cuisine),
			a.MaxMinutes > 0 && r.Minutes > a.MaxMinutes,
			!suits(r, p.Diet):
			continue
		}
		if blocked, ok := allergic(r, p.Allergies); !ok {
			// The allergen map does not cover this user: fail closed.
			return map[string]any{"recipes": []RecipeCard{}, "total": 0, "note": "allergen check unavailable"}, nil
		} else if blocked {
			continue
		}
		if found = append(found, r.RecipeCard); len(found) == a.Limit {
			break
		}
	}
	return map[string]any{"recipes": found, "total": len(found)}, nil
}

func matches(r Recipe, q string) bool {
	if q == "" {
		return true
	}
	for _, w := range strings.Fields(q) {
		if strings.Contains(strings.ToLower(r.Title), w) || r.Cuisine == w ||
			slices.ContainsFunc(r.Ingredients, func(i string) bool { return strings.Contains(i, w) }) {
			return true
		}
	}
	return false
}

func suits(r Recipe, diet []string) bool {
	for _, d := range diet {
		if !slices.Contains(r.Diets, d) {
			return false
		}
	}
	return true
}

// allergic reports whether r holds one of allergies; ok is false when an
// allergy is unknown (the caller fails closed).
func allergic(r Recipe, allergies []string) (blocked, ok bool) {
	for _, i := range r.Ingredients {
		hit, ok := containsAllergen(i, allergies)
		if !ok {
			return false, false
		}
		if hit != "" {
			return true, true
		}
	}
	return false, true
}
