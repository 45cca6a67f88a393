package openai

import (
	"encoding/json"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// schema is the subset of JSON Schema the default behaviour reads to invent
// plausible arguments for a tool.
type schema struct {
	Type       any                `json:"type"` // a string, or a list of them
	Properties map[string]*schema `json:"properties"`
	Required   []string           `json:"required"`
	Enum       []any              `json:"enum"`
	Default    any                `json:"default"`
	Format     string             `json:"format"`
	Minimum    *float64           `json:"minimum"`
	Maximum    *float64           `json:"maximum"`
	MaxLength  *int               `json:"maxLength"`
	MinItems   int                `json:"minItems"`
	Items      *schema            `json:"items"`
}

func (s *schema) typ() string {
	switch t := s.Type.(type) {
	case string:
		return t
	case []any:
		for _, v := range t {
			if v, ok := v.(string); ok && v != "null" {
				return v
			}
		}
	}
	if len(s.Enum) > 0 {
		if _, ok := s.Enum[0].(string); ok {
			return "string"
		}
	}
	if s.Properties != nil {
		return "object"
	}
	return "string"
}

// argContext is what argument values are drawn from: the user's words.
type argContext struct {
	message string
	words   []string
	used    map[string]bool // words consumed by enum values
	skip    map[string]bool // the tool's own name words ("search", "recipe")
}

// buildArguments invents arguments for tool from the user's message: required
// properties always, optional ones when the message supplies them. The query
// for "find me a pasta recipe" against search_recipes is "pasta".
func buildArguments(tool *ChatTool, message string) string {
	var root schema
	if len(tool.Function.Parameters) > 0 {
		_ = json.Unmarshal(tool.Function.Parameters, &root) // a bad schema yields "{}"
	}
	ctx := &argContext{message: message, words: words(message), used: map[string]bool{}, skip: map[string]bool{}}
	for _, w := range words(tool.Function.Name) {
		ctx.skip[w] = true
		for _, s := range synonyms(w) {
			ctx.skip[s] = true
		}
	}
	v := ctx.object(&root)
	b, err := json.Marshal(v)
	if err != nil {
		return "{}"
	}
	return string(b)
}

func (c *argContext) object(s *schema) map[string]any {
	out := map[string]any{}
	// Enums and numbers first, so the words they consume ("breakfast", "5")
	// stay out of the free-text values ("oatmeal").
	for pass := 0; pass < 3; pass++ {
		for _, name := range slices.Sorted(maps.Keys(s.Properties)) {
			p := s.Properties[name]
			if p == nil || fillPass(p) != pass {
				continue
			}
			required := Contains(s.Required, name)
			if v, ok := c.value(name, p, required); ok {
				out[name] = v
			}
		}
	}
	return out
}

func fillPass(p *schema) int {
	switch {
	case len(p.Enum) > 0:
		return 0
	case p.typ() == "integer" || p.typ() == "number":
		return 1
	}
	return 2
}

// value returns a value for property name; ok is false when an optional
// property has nothing from the message to fill it with.
func (c *argContext) value(name string, p *schema, required bool) (any, bool) {
	if len(p.Enum) > 0 {
		for _, e := range p.Enum {
			if es, ok := e.(string); ok && c.mentions(es) {
				for _, w := range words(es) {
					c.used[w] = true
				}
				return es, true
			}
		}
		if p.Default != nil {
			return p.Default, required
		}
		return p.Enum[0], required
	}
	switch p.typ() {
	case "object":
		if !required {
			return nil, false
		}
		return c.object(p), true
	case "array":
		if !required && p.MinItems == 0 {
			return nil, false
		}
		item := &schema{Type: "string"}
		if p.Items != nil {
			item = p.Items
		}
		v, _ := c.value(name, item, true)
		return []any{v}, true
	case "integer", "number":
		return c.number(p, required)
	case "boolean":
		if b, ok := p.Default.(bool); ok {
			return b, required
		}
		return false, required
	}
	return c.str(name, p, required)
}

func (c *argContext) str(name string, p *schema, required bool) (any, bool) {
	switch p.Format {
	case "date":
		return time.Now().UTC().Format(time.DateOnly), required
	case "date-time":
		return time.Now().UTC().Format(time.RFC3339), required
	}
	if !required && !queryLike(name) {
		return nil, false
	}
	v := c.topic()
	if v == "" {
		if !required {
			return nil, false
		}
		v = strings.TrimSpace(c.message)
	}
	if p.MaxLength != nil && len(v) > *p.MaxLength {
		v = TruncateUTF8(v, *p.MaxLength)
	}
	return v, true
}

var numberPattern = regexp.MustCompile(`-?\d+(?:\.\d+)?`)

func (c *argContext) number(p *schema, required bool) (any, bool) {
	inRange := func(f float64) bool {
		return (p.Minimum == nil || f >= *p.Minimum) && (p.Maximum == nil || f <= *p.Maximum)
	}
	if p.Default != nil {
		return p.Default, required
	}
	for _, m := range numberPattern.FindAllString(c.message, -1) {
		if f, err := strconv.ParseFloat(m, 64); err == nil && inRange(f) {
			c.used[m] = true
			if p.typ() == "integer" {
				return int64(f), true
			}
			return f, true
		}
	}
	if !required {
		return nil, false
	}
	f := 1.0
	if p.Minimum != nil {
		f = *p.Minimum
	} else if p.Maximum != nil && *p.Maximum < f {
		f = *p.Maximum
	}
	if p.typ() == "integer" {
		return int64(f), true
	}
	return f, true
}

// topic is the message minus filler words, the tool's own name words and
// words already used by enum values: "find me a pasta recipe" -> "pasta".
func (c *argContext) topic() string {
	var kept []string
	for _, w := range c.words {
		if stopWord(w) || c.skip[w] || c.used[w] {
			continue
		}
		kept = append(kept, w)
	}
	return strings.Join(kept, " ")
}

func (c *argContext) mentions(s string) bool {
	for _, want := range words(s) {
		if !Contains(c.words, want) {
			return false
		}
	}
	return s != ""
}

func queryLike(name string) bool {
	switch strings.ToLower(name) {
	case "query", "q", "search", "keywords", "text", "term", "terms", "food", "description",
		"item", "items", "name", "meal", "dish", "title", "ingredients", "topic":
		return true
	}
	return false
}

func stopWord(w string) bool {
	switch w {
	case "i", "me", "my", "a", "an", "the", "for", "to", "of", "and", "or", "please", "can", "could",
		"you", "some", "any", "want", "would", "like", "what", "is", "are", "was", "were", "had", "have",
		"ate", "eat", "just", "with", "in", "on", "at", "it", "this", "that", "today", "find", "show",
		"look", "get", "give", "need", "should", "do", "does", "how", "about", "up", "good", "nice",
		"something", "tell", "let", "us", "we", "our", "be", "ve", "m", "s", "t", "d", "ll":
		return true
	}
	return false
}

// TruncateUTF8 cuts s to at most n bytes without splitting a character.
func TruncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
