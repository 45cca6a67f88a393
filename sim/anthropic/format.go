package anthropic

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Structured outputs (output_config.format, docs/sim.md "Anthropic
// structured outputs"): a json_schema format whose schema keeps to the
// subset the API compiles to a grammar. What the API refuses, the
// simulator refuses with the API's message where one is on record, so a
// gateway that forwards an unsupported schema fails here as it would
// there.

// anthFormatKeys are the schema keywords the API takes: anthropic-sdk-go
// v2.15.0 schemautil.go's supportedSchemaKeys, less oneOf (the SDK
// rewrites it to anyOf before sending, so the API is never sent one), plus
// the local "definitions" the docs list beside $defs.
var anthFormatKeys = []string{"$ref", "$defs", "definitions", "type", "anyOf", "allOf", "description", "title",
	"enum", "const", "properties", "additionalProperties", "required", "items", "minItems", "format", "pattern"}

// anthStringFormats are the string formats the API takes (the same file's
// supportedStringFormats).
var anthStringFormats = []string{"date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4", "ipv6", "uuid"}

// decodeOutputConfig checks output_config and returns its format's schema,
// nil when no format is asked.
func decodeOutputConfig(raw json.RawMessage, model string) (json.RawMessage, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var oc map[string]json.RawMessage
	if err := json.Unmarshal(raw, &oc); err != nil || oc == nil {
		return nil, anthInvalid("output_config: Input should be a valid dictionary")
	}
	for _, k := range slices.Sorted(maps.Keys(oc)) {
		if k != "effort" && k != "format" {
			return nil, anthInvalid("output_config." + k + ": Extra inputs are not permitted")
		}
	}
	f, ok := oc["format"]
	if !ok || string(f) == "null" {
		return nil, nil
	}
	var format map[string]json.RawMessage
	if err := json.Unmarshal(f, &format); err != nil || format == nil {
		return nil, anthInvalid("output_config.format: Input should be a valid dictionary")
	}
	for _, k := range slices.Sorted(maps.Keys(format)) {
		if k != "type" && k != "schema" {
			return nil, anthInvalid("output_config.format." + k + ": Extra inputs are not permitted")
		}
	}
	if string(format["type"]) != `"json_schema"` {
		return nil, anthInvalid("output_config.format.type: Input should be 'json_schema'")
	}
	schema, ok := format["schema"]
	if !ok {
		return nil, anthInvalid("output_config.format.schema: Field required")
	}
	var root map[string]any
	if err := json.Unmarshal(schema, &root); err != nil || root == nil {
		return nil, anthInvalid("output_config.format.schema: Input should be a valid dictionary")
	}
	if !takesOutputFormat(model) {
		return nil, anthInvalid(fmt.Sprintf("output_config.format: structured outputs are not supported on model '%s'", model))
	}
	c := schemaCheck{defs: map[string]any{}, clean: map[string]bool{}}
	for _, kind := range []string{"$defs", "definitions"} {
		if defs, ok := root[kind].(map[string]any); ok {
			for name, d := range defs {
				c.defs["#/"+kind+"/"+name] = d
			}
		}
	}
	if msg := c.check(root); msg != "" {
		return nil, anthInvalid("output_config.format.schema: " + msg)
	}
	return schema, nil
}

// takesOutputFormat reports a model with structured outputs: Claude 4.5
// and later (the docs list Haiku 4.5, Sonnet 4.5, Opus 4.5 and the 4.6
// models as GA). A name without a version (a test's own model) takes it.
func takesOutputFormat(model string) bool {
	major, minor, ok := claudeVersion(model)
	return !ok || major > 4 || major == 4 && minor >= 5
}

type schemaCheck struct {
	defs     map[string]any
	visiting []string        // the $refs being expanded, to find a cycle
	clean    map[string]bool // $refs expanded to their end with no refusal
}

// check is the API's message for the first thing in s it refuses, "" for
// none.
func (c *schemaCheck) check(s any) string {
	node, ok := s.(map[string]any)
	if !ok {
		return "" // a boolean schema
	}
	typ := schemaType(node)
	var unsupported []string
	for _, k := range slices.Sorted(maps.Keys(node)) {
		if !slices.Contains(anthFormatKeys, k) {
			unsupported = append(unsupported, k)
		}
	}
	switch len(unsupported) {
	case 0:
	case 1:
		return fmt.Sprintf("For '%s' type, property '%s' is not supported", typ, unsupported[0])
	default:
		return fmt.Sprintf("For '%s' type, properties %s are not supported", typ, strings.Join(unsupported, ", "))
	}
	if ref, ok := node["$ref"].(string); ok {
		if !strings.HasPrefix(ref, "#/") {
			return fmt.Sprintf("$ref '%s': only local references are supported", ref)
		}
		if slices.Contains(c.visiting, ref) {
			return fmt.Sprintf("$ref '%s': recursive schemas are not supported", ref)
		}
		if !c.clean[ref] {
			c.visiting = append(c.visiting, ref)
			msg := c.check(c.defs[ref])
			c.visiting = c.visiting[:len(c.visiting)-1]
			if msg != "" {
				return msg
			}
			c.clean[ref] = true
		}
	}
	if typ == "object" {
		if ap, ok := node["additionalProperties"]; !ok || ap != false {
			return "For 'object' type, 'additionalProperties' must be explicitly set to false"
		}
	}
	if n, ok := node["minItems"].(float64); ok && n != 0 && n != 1 {
		return "For 'array' type, 'minItems' values other than 0 or 1 are not supported"
	}
	if f, ok := node["format"].(string); ok && !slices.Contains(anthStringFormats, f) {
		return fmt.Sprintf("For 'string' type, format '%s' is not supported", f)
	}
	if enum, ok := node["enum"].([]any); ok {
		for _, v := range enum {
			switch v.(type) {
			case map[string]any, []any:
				return "enum values must be strings, numbers, booleans or null"
			}
		}
	}
	var subs []any
	if props, ok := node["properties"].(map[string]any); ok {
		for _, k := range slices.Sorted(maps.Keys(props)) {
			subs = append(subs, props[k])
		}
	}
	subs = append(subs, node["items"])
	for _, k := range []string{"anyOf", "allOf"} {
		if list, ok := node[k].([]any); ok {
			subs = append(subs, list...)
		}
	}
	for _, sub := range subs {
		if msg := c.check(sub); msg != "" {
			return msg
		}
	}
	return ""
}

// schemaType is the type a message names: the schema's own, the first
// not null of a list, else object for one with properties.
func schemaType(node map[string]any) string {
	switch t := node["type"].(type) {
	case string:
		return t
	case []any:
		for _, v := range t {
			if s, ok := v.(string); ok && s != "null" {
				return s
			}
		}
	}
	if _, ok := node["properties"]; ok {
		return "object"
	}
	return "unknown"
}
