// Package schemagen makes a JSON value a JSON Schema accepts: the
// simulators' structured answers (Chat Completions' and Responses'
// response formats, Anthropic's output_config.format, Gemini's
// responseJsonSchema) all come from it, so one rule answers them all.
package schemagen

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"
)

// genSchema is the subset of JSON Schema a structured answer is built
// from. The value is made from the schema alone, never from the user's
// words, which may hold personal data the gateway's filters would
// (rightly) flag, and so is the same for the same schema.
type genSchema struct {
	Type             any                   `json:"type"` // a string, or a list of them
	Properties       map[string]*genSchema `json:"properties"`
	Required         []string              `json:"required"`
	Enum             []any                 `json:"enum"`
	Const            any                   `json:"const"`
	Default          any                   `json:"default"`
	Format           string                `json:"format"`
	Minimum          *float64              `json:"minimum"`
	Maximum          *float64              `json:"maximum"`
	ExclusiveMinimum *float64              `json:"exclusiveMinimum"`
	MinLength        int                   `json:"minLength"`
	MaxLength        *int                  `json:"maxLength"`
	MinItems         int                   `json:"minItems"`
	MaxItems         *int                  `json:"maxItems"`
	Items            *genSchema            `json:"items"`
	AnyOf            []*genSchema          `json:"anyOf"`
	Ref              string                `json:"$ref"`
	Defs             map[string]*genSchema `json:"$defs"`
	Definitions      map[string]*genSchema `json:"definitions"`
}

// maxGenDepth bounds a recursive schema ($ref to itself).
const maxGenDepth = 8

// JSON is a JSON value schema accepts: an object with its required
// properties, the first of an enum, a string named for its property and
// so on; "{}" for a schema it cannot read.
func JSON(schema json.RawMessage) string {
	var root genSchema
	if len(schema) > 0 && json.Unmarshal(schema, &root) != nil {
		return "{}"
	}
	g := generator{defs: map[string]*genSchema{}}
	for k, v := range root.Definitions {
		g.defs["#/definitions/"+k] = v
	}
	for k, v := range root.Defs {
		g.defs["#/$defs/"+k] = v
	}
	v := g.value(&root, "answer", 0)
	if v == nil && root.typ() == "object" {
		v = map[string]any{}
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "{}"
	}
	return string(b)
}

type generator struct {
	defs map[string]*genSchema
}

func (s *genSchema) typ() string {
	switch t := s.Type.(type) {
	case string:
		return t
	case []any:
		for _, v := range t {
			if v, ok := v.(string); ok && v != "null" {
				return v
			}
		}
		return "null"
	}
	if s.Properties != nil {
		return "object"
	}
	if s.Items != nil {
		return "array"
	}
	return "string"
}

func (g *generator) value(s *genSchema, name string, depth int) any {
	if s == nil || depth > maxGenDepth {
		return nil
	}
	if s.Ref != "" {
		return g.value(g.defs[s.Ref], name, depth+1)
	}
	switch {
	case s.Const != nil:
		return s.Const
	case len(s.Enum) > 0:
		return s.Enum[0]
	case s.Default != nil:
		return s.Default
	case len(s.AnyOf) > 0:
		for _, b := range s.AnyOf {
			if b.typ() != "null" || b.Ref != "" {
				return g.value(b, name, depth+1)
			}
		}
		return nil
	}
	switch s.typ() {
	case "object":
		out := map[string]any{}
		for _, p := range slices.Sorted(maps.Keys(s.Properties)) {
			if slices.Contains(s.Required, p) {
				out[p] = g.value(s.Properties[p], p, depth+1)
			}
		}
		return out
	case "array":
		n := max(s.MinItems, 1)
		if s.MaxItems != nil {
			n = min(n, *s.MaxItems)
		}
		out := make([]any, n)
		for i := range out {
			out[i] = g.value(s.Items, name, depth+1)
		}
		return out
	case "integer", "number":
		return s.number()
	case "boolean":
		return true
	case "null":
		return nil
	}
	return s.str(name)
}

func (s *genSchema) number() any {
	f := 1.0
	switch {
	case s.Minimum != nil:
		f = *s.Minimum
	case s.ExclusiveMinimum != nil:
		f = *s.ExclusiveMinimum + 1
	}
	if s.Maximum != nil && f > *s.Maximum {
		f = *s.Maximum
	}
	if s.typ() == "integer" {
		return int64(f)
	}
	return f
}

// str is a string of the schema's format, else the property's name in
// words ("city_name" is "city name"), held to its length bounds.
func (s *genSchema) str(name string) string {
	switch s.Format {
	case "date":
		return "2026-01-01"
	case "date-time":
		return "2026-01-01T00:00:00Z"
	case "time":
		return "00:00:00Z"
	case "email":
		return "sim@example.com"
	case "uri":
		return "https://example.com/"
	case "uuid":
		return "00000000-0000-4000-8000-000000000000"
	}
	if name == "" {
		name = "text"
	}
	v := strings.ReplaceAll(name, "_", " ")
	for len(v) < s.MinLength {
		v += " " + name
	}
	if s.MaxLength != nil && len(v) > *s.MaxLength {
		v = truncateUTF8(v, *s.MaxLength)
	}
	return v
}

// truncateUTF8 cuts s to at most n bytes on a rune boundary.
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
