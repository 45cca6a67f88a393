package demo

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// exclusions is what a user's allergies rule out: allergen groups from the
// map, and the terms the map does not know, matched against ingredient
// names instead.
type exclusions struct {
	terms   []string // every term, normalised
	groups  []string // allergen groups the known terms map to
	unknown []string // terms the map lacks
}

// errAllergenMap means the map could not be read or is empty. Callers must
// fail closed: a user with restrictions then gets no recipes.
var errAllergenMap = errors.New("demo: allergen map unavailable")

// mapSQL maps terms to groups and reports the map's size in the same round
// trip, so an emptied map is noticed as surely as a missing one.
const mapSQL = `SELECT t.term, coalesce(array_agg(g.allergen ORDER BY g.allergen) FILTER (WHERE g.allergen IS NOT NULL), '{}'),
	(SELECT count(*) FROM allergen_groups)
FROM unnest($1::text[]) AS t(term)
LEFT JOIN allergen_groups g ON g.term = t.term
GROUP BY t.term ORDER BY t.term`

// exclusionsFor normalises the user's allergy terms and resolves them
// through the allergen map. With no terms it reads nothing.
func (d *app) exclusionsFor(ctx context.Context, lists ...[]string) (exclusions, error) {
	var ex exclusions
	for _, l := range lists {
		for _, t := range l {
			t = strings.ToLower(strings.TrimSpace(t))
			if t != "" && !slices.Contains(ex.terms, t) {
				ex.terms = append(ex.terms, t)
			}
		}
	}
	if len(ex.terms) == 0 {
		return ex, nil
	}
	slices.Sort(ex.terms)
	rows, err := d.db.Query(ctx, mapSQL, ex.terms)
	if err != nil {
		return ex, fmt.Errorf("%w: %w", errAllergenMap, err)
	}
	defer rows.Close()
	var size int64
	for rows.Next() {
		var term string
		var groups []string
		if err := rows.Scan(&term, &groups, &size); err != nil {
			return ex, fmt.Errorf("%w: %w", errAllergenMap, err)
		}
		if len(groups) == 0 {
			ex.unknown = append(ex.unknown, term)
		}
		for _, g := range groups {
			if !slices.Contains(ex.groups, g) {
				ex.groups = append(ex.groups, g)
			}
		}
	}
	if err := rows.Err(); err != nil {
		return ex, fmt.Errorf("%w: %w", errAllergenMap, err)
	}
	if size == 0 {
		return ex, fmt.Errorf("%w: the map is empty", errAllergenMap)
	}
	slices.Sort(ex.groups)
	return ex, nil
}
