// Package seed turns the demo recipe data (recipes.txt, ingredients.txt)
// into the SQL of tools/demo/migrations/0002_recipes.sql. Allergens and
// diets are derived from the ingredient classes rather than typed per
// recipe, so a recipe cannot claim to be vegan while listing butter. The
// output is a pure function of the two files: the same data always yields
// the same SQL, and a test keeps the committed migration in step.
package seed

import (
	"bufio"
	_ "embed"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

//go:embed recipes.txt
var recipesTxt string

//go:embed ingredients.txt
var ingredientsTxt string

// Allergens are the ingredient classes that become recipes.allergens.
var Allergens = []string{"celery", "dairy", "egg", "fish", "gluten", "mustard", "peanut", "sesame", "shellfish", "soy", "tree_nut"}

var classes = append([]string{"meat", "poultry", "honey", "none"}, Allergens...)

// Recipe is one parsed recipe with its derived fields.
type Recipe struct {
	ID                          int
	Slug, Title, Cuisine        string
	Course, Difficulty, Summary string
	Minutes, Servings           int
	Kcal                        int
	Protein, Carbs, Fat, Fiber  float64
	Tags, Ingredients, Names    []string
	Steps, Allergens, Diets     []string
	Score                       int
}

// Recipes parses the embedded data.
func Recipes() ([]Recipe, error) {
	dict, err := parseIngredients(ingredientsTxt)
	if err != nil {
		return nil, err
	}
	var out []Recipe
	var errs []error
	seen := map[string]int{}
	sc := bufio.NewScanner(strings.NewReader(recipesTxt))
	sc.Buffer(make([]byte, 64<<10), 64<<10)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		r, err := parseRecipe(line, dict)
		if err != nil {
			errs = append(errs, fmt.Errorf("recipes.txt:%d: %w", n, err))
			continue
		}
		if prev, dup := seen[r.Slug]; dup {
			errs = append(errs, fmt.Errorf("recipes.txt:%d: %q duplicates line %d", n, r.Title, prev))
			continue
		}
		seen[r.Slug] = n
		r.ID = len(out) + 1
		out = append(out, r)
	}
	if err := errors.Join(append(errs, sc.Err())...); err != nil {
		return nil, err
	}
	return out, nil
}

func parseIngredients(txt string) (map[string][]string, error) {
	dict := map[string][]string{}
	for n, line := range strings.Split(txt, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		class, list, ok := strings.Cut(line, ":")
		if !ok || !slices.Contains(classes, class) {
			return nil, fmt.Errorf("ingredients.txt:%d: unknown class %q", n+1, class)
		}
		for _, name := range strings.Split(list, ",") {
			name = strings.TrimSpace(name)
			if class != "none" && slices.Contains(dict[name], "none") || class == "none" && len(dict[name]) > 0 {
				return nil, fmt.Errorf("ingredients.txt:%d: %q is both none and a class", n+1, name)
			}
			dict[name] = append(dict[name], class)
		}
	}
	return dict, nil
}

func parseRecipe(line string, dict map[string][]string) (Recipe, error) {
	f := strings.Split(line, " | ")
	if len(f) != 11 {
		return Recipe{}, fmt.Errorf("want 11 fields, got %d", len(f))
	}
	r := Recipe{Title: f[0], Cuisine: f[1], Course: f[2], Difficulty: f[4], Summary: f[9]}
	r.Slug = slug(r.Title)
	var err error
	if r.Minutes, err = strconv.Atoi(f[3]); err != nil || r.Minutes <= 0 {
		return r, fmt.Errorf("minutes %q", f[3])
	}
	if r.Servings, err = strconv.Atoi(f[5]); err != nil || r.Servings <= 0 {
		return r, fmt.Errorf("servings %q", f[5])
	}
	if !slices.Contains([]string{"easy", "medium", "hard"}, r.Difficulty) {
		return r, fmt.Errorf("difficulty %q", r.Difficulty)
	}
	nut := strings.Split(f[6], ",")
	if len(nut) != 5 {
		return r, fmt.Errorf("nutrition %q: want kcal,protein,carbs,fat,fiber", f[6])
	}
	vals := make([]float64, 5)
	for i, s := range nut {
		if vals[i], err = strconv.ParseFloat(s, 64); err != nil || vals[i] < 0 {
			return r, fmt.Errorf("nutrition %q", f[6])
		}
	}
	r.Kcal, r.Protein, r.Carbs, r.Fat, r.Fiber = int(vals[0]), vals[1], vals[2], vals[3], vals[4]
	// Energy from macros should roughly match the stated kcal.
	if est := 4*r.Protein + 4*r.Carbs + 9*r.Fat; math.Abs(est-float64(r.Kcal)) > 0.25*float64(r.Kcal)+40 {
		return r, fmt.Errorf("%s: %d kcal but macros give %.0f", r.Title, r.Kcal, est)
	}
	for _, t := range strings.Split(f[7], ",") {
		r.Tags = append(r.Tags, strings.TrimSpace(t))
	}
	has := map[string]bool{}
	for _, ing := range strings.Split(f[8], ";") {
		ing = strings.TrimSpace(ing)
		name, qty, _ := strings.Cut(ing, " (")
		cls, ok := dict[name]
		if !ok {
			return r, fmt.Errorf("ingredient %q is not in ingredients.txt", name)
		}
		for _, c := range cls {
			has[c] = true
		}
		r.Names = append(r.Names, name)
		if qty = strings.TrimSuffix(qty, ")"); qty != "" {
			ing = qty + " " + name
			if strings.HasPrefix(qty, "to taste") || strings.HasPrefix(qty, "for ") || strings.HasPrefix(qty, "pinch") || strings.HasPrefix(qty, "handful") || strings.HasPrefix(qty, "small") || strings.HasPrefix(qty, "bunch") || strings.HasPrefix(qty, "thumb") || strings.HasPrefix(qty, "large") {
				ing = name + " (" + qty + ")"
			}
		}
		r.Ingredients = append(r.Ingredients, ing)
	}
	for _, s := range strings.Split(f[10], " / ") {
		r.Steps = append(r.Steps, strings.TrimSpace(s))
	}
	for _, a := range Allergens {
		if has[a] {
			r.Allergens = append(r.Allergens, a)
		}
	}
	r.Diets = diets(has)
	if err := checkTags(r); err != nil {
		return r, err
	}
	if r.Minutes <= 30 && !slices.Contains(r.Tags, "quick") {
		r.Tags = append(r.Tags, "quick")
	}
	if r.Protein >= 30 && !slices.Contains(r.Tags, "high-protein") {
		r.Tags = append(r.Tags, "high-protein")
	}
	r.Score = score(r)
	return r, nil
}

func diets(has map[string]bool) []string {
	animal := has["meat"] || has["poultry"]
	sea := has["fish"] || has["shellfish"]
	var d []string
	if !animal && !sea && !has["dairy"] && !has["egg"] && !has["honey"] {
		d = append(d, "vegan")
	}
	if !animal && !sea {
		d = append(d, "vegetarian")
	}
	if !animal {
		d = append(d, "pescatarian")
	}
	if !has["gluten"] {
		d = append(d, "gluten_free")
	}
	if !has["dairy"] {
		d = append(d, "dairy_free")
	}
	return d
}

// checkTags refuses a hand-written tag that contradicts the ingredients.
func checkTags(r Recipe) error {
	need := map[string]string{"plant-based": "vegan", "vegan-friendly": "vegan",
		"vegetarian-classic": "vegetarian", "gluten-free-friendly": "gluten_free"}
	for _, t := range r.Tags {
		if d, ok := need[t]; ok && !slices.Contains(r.Diets, d) {
			return fmt.Errorf("%s: tag %q but the ingredients are not %s (diets %v)", r.Title, t, d, r.Diets)
		}
	}
	return nil
}

// score is the card's 0–100 nutrition score: a plain, documented heuristic
// that rewards protein share and fibre and penalises a high fat share and
// very large portions. It is for sorting cards, not dietary advice.
func score(r Recipe) int {
	kcal := math.Max(float64(r.Kcal), 1)
	proteinShare := 4 * r.Protein / kcal
	fatShare := 9 * r.Fat / kcal
	s := 50 + 100*(proteinShare-0.15) + 3*math.Min(r.Fiber, 10) -
		60*math.Max(0, fatShare-0.35) - math.Max(0, (kcal-700)/10)
	return int(math.Round(math.Max(0, math.Min(100, s))))
}

func slug(title string) string {
	var b strings.Builder
	dash := false
	for _, c := range strings.ToLower(title) {
		switch {
		case c >= 'a' && c <= 'z' || c >= '0' && c <= '9':
			b.WriteRune(c)
			dash = false
		case !dash && b.Len() > 0:
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.TrimSuffix(b.String(), "-")
}
