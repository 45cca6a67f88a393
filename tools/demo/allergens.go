package demo

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"
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

// allergenCache holds the allergen map for a short while. The map is seed
// data that changes with migrations, and reading it on every search would
// cost a round trip per call. A failed or empty load is never cached: the
// next search tries again, and until one succeeds users with restrictions
// get no recipes.
type allergenCache struct {
	ttl    time.Duration
	mu     sync.Mutex
	m      map[string][]string
	loaded time.Time
}

const allergenMapSQL = `SELECT term, allergen FROM demo.allergen_groups ORDER BY term, allergen`

func (c *allergenCache) get(ctx context.Context, d *app) (map[string][]string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m != nil && d.now().Sub(c.loaded) < c.ttl {
		return c.m, nil
	}
	c.m = nil
	rows, err := d.db.Query(ctx, allergenMapSQL)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errAllergenMap, err)
	}
	defer rows.Close()
	m := map[string][]string{}
	for rows.Next() {
		var term, group string
		if err := rows.Scan(&term, &group); err != nil {
			return nil, fmt.Errorf("%w: %w", errAllergenMap, err)
		}
		m[term] = append(m[term], group)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%w: %w", errAllergenMap, err)
	}
	if len(m) == 0 {
		return nil, fmt.Errorf("%w: the map is empty", errAllergenMap)
	}
	c.m, c.loaded = m, d.now()
	return m, nil
}

// exclusionsFor normalises the user's allergy terms and resolves them
// through the allergen map. With no terms it needs no map at all.
func (d *app) exclusionsFor(ctx context.Context, lists ...[]string) (exclusions, error) {
	ex := exclusions{terms: mergeTerms(lists...)}
	if len(ex.terms) == 0 {
		return ex, nil
	}
	m, err := d.maps.get(ctx, d)
	if err != nil {
		return ex, err
	}
	slices.Sort(ex.terms)
	for _, t := range ex.terms {
		groups, ok := m[t]
		if !ok {
			ex.unknown = append(ex.unknown, t)
		}
		for _, g := range groups {
			if !slices.Contains(ex.groups, g) {
				ex.groups = append(ex.groups, g)
			}
		}
	}
	slices.Sort(ex.groups)
	return ex, nil
}
