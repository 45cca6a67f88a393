package demo

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
)

// appendCard appends c's JSON encoding to b: the bytes json.Marshal(c)
// gives, without its reflection. A search encodes every card it returns, on
// the path of every call, and json.Marshal was about half of the Go time
// spent shaping a search (pprof, BenchmarkSearchRecipes). Strings that are
// not plain printable ASCII, and the rare float that json.Marshal would
// write in exponent form, are left to encoding/json, so its escaping rules
// hold. TestAppendCardMatchesMarshal checks every seed recipe and the edge
// cases against json.Marshal.
func appendCard(b []byte, c *RecipeCard) ([]byte, error) {
	var err error
	b = append(b, `{"id":`...)
	b = strconv.AppendInt(b, int64(c.ID), 10)
	b = append(b, `,"title":`...)
	b = appendJSONString(b, c.Title)
	b = append(b, `,"cuisine":`...)
	b = appendJSONString(b, c.Cuisine)
	b = append(b, `,"total_minutes":`...)
	b = strconv.AppendInt(b, int64(c.TotalMinutes), 10)
	b = append(b, `,"difficulty":`...)
	b = appendJSONString(b, c.Difficulty)
	b = append(b, `,"kcal":`...)
	b = strconv.AppendInt(b, int64(c.Kcal), 10)
	b = append(b, `,"protein_g":`...)
	if b, err = appendJSONFloat(b, c.ProteinG); err != nil {
		return b, err
	}
	b = append(b, `,"nutrition_score":`...)
	b = strconv.AppendInt(b, int64(c.NutritionScore), 10)
	b = append(b, `,"diets":`...)
	b = appendJSONStrings(b, c.Diets)
	b = append(b, `,"allergens":`...)
	b = appendJSONStrings(b, c.Allergens)
	return append(b, '}'), nil
}

// appendJSONString appends s as json.Marshal writes it.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		// Anything json.Marshal would escape: controls, quotes, the
		// backslash, the HTML characters and every non-ASCII byte.
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always encodes
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

func appendJSONStrings(b []byte, xs []string) []byte {
	if xs == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, x := range xs {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, x)
	}
	return append(b, ']')
}

// appendJSONFloat appends f as json.Marshal writes a float64.
func appendJSONFloat(b []byte, f float64) ([]byte, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return b, fmt.Errorf("json: unsupported value: %v", f)
	}
	if a := math.Abs(f); a != 0 && (a < 1e-6 || a >= 1e21) {
		q, err := json.Marshal(f)
		return append(b, q...), err
	}
	return strconv.AppendFloat(b, f, 'f', -1, 64), nil
}
