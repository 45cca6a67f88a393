package core

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Strict mode's check of a JSON schema, shared by Chat Completions'
// response_format and Responses' text.format: the real API applies the
// one rule set (Structured Outputs' supported subset) to both, with the
// one message.

// strictNode is what strict mode checks of each schema: every object
// closes its properties and requires all of them.
type strictNode struct {
	Type                 any                    `json:"type"`
	Properties           map[string]*strictNode `json:"properties"`
	Required             []string               `json:"required"`
	AdditionalProperties *bool                  `json:"additionalProperties"`
	Items                *strictNode            `json:"items"`
	AnyOf                []*strictNode          `json:"anyOf"`
	Defs                 map[string]*strictNode `json:"$defs"`
}

// CheckStrictSchema applies strict mode's rules the API checks before
// any answer, for the format named name; the 400 names param
// ("response_format" on Chat Completions, "text.format.schema" on
// Responses) with the API's message.
func CheckStrictSchema(param, name string, raw json.RawMessage) error {
	var root strictNode
	if len(raw) > 0 {
		_ = json.Unmarshal(raw, &root) // a schema of another shape has nothing to check
	}
	if msg := root.check(nil); msg != "" {
		return ErrInvalidRequest(param, fmt.Sprintf("Invalid schema for response_format '%s': %s", name, msg))
	}
	return nil
}

func (n *strictNode) check(path []string) string {
	if n == nil {
		return ""
	}
	context := "In context=(" + quoteJoin(path) + "), "
	if n.isObject() {
		if n.AdditionalProperties == nil || *n.AdditionalProperties {
			return context + "'additionalProperties' is required to be supplied and to be false."
		}
		for _, p := range slices.Sorted(maps.Keys(n.Properties)) {
			if !slices.Contains(n.Required, p) {
				return context + "'required' is required to be supplied and to be an array including every key in properties. Missing '" + p + "'."
			}
		}
	}
	for _, p := range slices.Sorted(maps.Keys(n.Properties)) {
		if msg := n.Properties[p].check(append(path, "properties", p)); msg != "" {
			return msg
		}
	}
	if msg := n.Items.check(append(path, "items")); msg != "" {
		return msg
	}
	for i, b := range n.AnyOf {
		if msg := b.check(append(path, "anyOf", fmt.Sprint(i))); msg != "" {
			return msg
		}
	}
	for _, d := range slices.Sorted(maps.Keys(n.Defs)) {
		if msg := n.Defs[d].check(append(path, "$defs", d)); msg != "" {
			return msg
		}
	}
	return ""
}

func (n *strictNode) isObject() bool {
	switch t := n.Type.(type) {
	case string:
		return t == "object"
	case []any:
		return slices.Contains(t, any("object"))
	}
	return false
}

// quoteJoin renders a schema path as the API's context does: 'a', 'b'.
func quoteJoin(path []string) string {
	q := make([]string, len(path))
	for i, p := range path {
		q[i] = "'" + p + "'"
	}
	return strings.Join(q, ", ")
}
