package anthropic

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/voxgate/voxgate/llm"
)

// Structured outputs (docs/llm.md, "Structured outputs"): a json_schema
// format goes as output_config.format, the schema as the client wrote it
// but for additionalProperties: false on every object that leaves it out
// (the API requires it said; it only narrows what the schema accepts, so
// the answer still keeps to the client's schema). A schema keyword outside
// what the API compiles is named by Unhonoured, never dropped or moved
// into a description as the SDKs' helpers do: they validate the answer
// afterwards, and the gateway does not.

// outputKeys are the schema keywords the API takes (anthropic-sdk-go
// v2.15.0 schemautil.go, supportedSchemaKeys; oneOf left out, as the SDK
// rewrites it to the looser anyOf rather than send it).
var outputKeys = map[string]bool{"$ref": true, "$defs": true, "definitions": true, "type": true, "anyOf": true,
	"allOf": true, "description": true, "title": true, "enum": true, "const": true, "properties": true,
	"additionalProperties": true, "required": true, "items": true, "minItems": true, "format": true, "pattern": true}

// outputStringFormats are the string formats it takes (the same file's
// supportedStringFormats).
var outputStringFormats = []string{"date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4", "ipv6", "uuid"}

// formatField is the client's name for the schema, which the paths
// Unhonoured gives start from.
const formatField = "response_format.json_schema.schema"

// formatUnhonoured names what of f the model cannot be held to: any
// format for a model without structured outputs, JSON mode (the API has
// none, and an object open to any member cannot be said to it), and the
// first schema keyword it does not take.
func formatUnhonoured(model string, f *llm.ResponseFormat) string {
	if f == nil {
		return ""
	}
	if f.Type != llm.FormatJSONSchema || !takesOutputFormat(model) {
		return "response_format"
	}
	var root any
	if err := json.Unmarshal(f.Schema, &root); err != nil {
		return formatField
	}
	if _, ok := root.(map[string]any); !ok {
		return formatField // the API takes an object, as the SDK's param
	}
	c := outputCheck{root: root, clean: map[string]bool{}}
	return c.walk(root, formatField)
}

// outputConfig is output_config for f: none for nil, the schema with its
// objects closed for json_schema.
func outputConfig(f *llm.ResponseFormat) (anthropic.OutputConfigParam, error) {
	var oc anthropic.OutputConfigParam
	if f == nil {
		return oc, nil
	}
	if f.Type != llm.FormatJSONSchema {
		return oc, fmt.Errorf("response format %q: the Messages API has only json_schema", f.Type)
	}
	var schema map[string]any
	if err := json.Unmarshal(f.Schema, &schema); err != nil || schema == nil {
		return oc, errors.New("response format: the schema is not a JSON object")
	}
	closeObjects(schema)
	oc.Format = anthropic.JSONOutputFormatParam{Schema: schema}
	return oc, nil
}

// closeObjects sets additionalProperties: false on every object schema
// in s that does not say it.
func closeObjects(s any) {
	node, ok := s.(map[string]any)
	if !ok {
		return
	}
	if _, said := node["additionalProperties"]; !said && isObject(node) {
		node["additionalProperties"] = false
	}
	for _, sub := range subschemas(node) {
		closeObjects(sub.schema)
	}
}

func isObject(node map[string]any) bool {
	switch t := node["type"].(type) {
	case string:
		return t == "object"
	case []any:
		return slices.Contains(t, any("object"))
	}
	_, props := node["properties"]
	return props
}

type subschema struct {
	path   string
	schema any
}

// subschemas are the schemas nested in node, with their paths.
func subschemas(node map[string]any) []subschema {
	var out []subschema
	for _, k := range []string{"properties", "$defs", "definitions"} {
		if m, ok := node[k].(map[string]any); ok {
			for _, name := range slices.Sorted(maps.Keys(m)) {
				out = append(out, subschema{"." + k + "." + name, m[name]})
			}
		}
	}
	if items, ok := node["items"]; ok {
		out = append(out, subschema{".items", items})
	}
	for _, k := range []string{"anyOf", "allOf"} {
		if list, ok := node[k].([]any); ok {
			for i, sub := range list {
				out = append(out, subschema{"." + k + "[" + strconv.Itoa(i) + "]", sub})
			}
		}
	}
	return out
}

type outputCheck struct {
	root any
	refs []string // the $refs being followed, to find a cycle
	// clean are the $refs already followed to their end without a
	// refusal: one followed again would find none, and schemas that
	// reach one definition by many paths stay linear to check.
	clean map[string]bool
}

// walk is the path of the first thing under s the API refuses, "" for
// none.
func (c *outputCheck) walk(s any, path string) string {
	node, ok := s.(map[string]any)
	if !ok {
		return ""
	}
	for _, k := range slices.Sorted(maps.Keys(node)) {
		if !outputKeys[k] {
			return path + "." + k
		}
	}
	if ap, said := node["additionalProperties"]; said && ap != false {
		return path + ".additionalProperties"
	}
	if n, ok := node["minItems"].(float64); ok && n != 0 && n != 1 {
		return path + ".minItems"
	}
	if f, ok := node["format"].(string); ok && !slices.Contains(outputStringFormats, f) {
		return path + ".format"
	}
	if enum, ok := node["enum"].([]any); ok && slices.ContainsFunc(enum, composite) {
		return path + ".enum"
	}
	if ref, ok := node["$ref"].(string); ok {
		if p := c.follow(ref, path); p != "" {
			return p
		}
	}
	for _, sub := range subschemas(node) {
		if p := c.walk(sub.schema, path+sub.path); p != "" {
			return p
		}
	}
	return ""
}

// follow checks the schema ref (at path) points to: a reference that is
// not local, points nowhere or comes back to itself is the API's refusal
// (external references, recursive schemas), named as the $ref; what the
// definition holds is named where it stands.
func (c *outputCheck) follow(ref, path string) string {
	if c.clean[ref] {
		return ""
	}
	target, ok := c.resolve(ref)
	if !ok || slices.Contains(c.refs, ref) {
		return path + ".$ref"
	}
	c.refs = append(c.refs, ref)
	defer func() { c.refs = c.refs[:len(c.refs)-1] }()
	at := formatField + strings.ReplaceAll(strings.TrimPrefix(ref, "#"), "/", ".")
	p := c.walk(target, at)
	if p == "" {
		c.clean[ref] = true
	}
	return p
}

// resolve finds a local "#/…" reference in the root schema.
func (c *outputCheck) resolve(ref string) (any, bool) {
	rest, ok := strings.CutPrefix(ref, "#")
	if !ok {
		return nil, false
	}
	cur := c.root
	for _, part := range strings.Split(strings.TrimPrefix(rest, "/"), "/") {
		if part == "" {
			continue
		}
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")]; !ok {
			return nil, false
		}
	}
	return cur, true
}

func composite(v any) bool {
	switch v.(type) {
	case map[string]any, []any:
		return true
	}
	return false
}
