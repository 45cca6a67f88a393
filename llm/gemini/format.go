package gemini

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"google.golang.org/genai"

	"github.com/voxgate/voxgate/llm"
)

// Structured output (docs/llm.md, "Structured outputs"): JSON mode is
// responseMimeType application/json; a json_schema adds the schema as
// responseJsonSchema, as the client wrote it. Gemini ignores the schema
// keywords outside its list rather than refuse them, so a strict format
// naming one is Unhonoured (nothing would hold the answer to it); a
// format that is not strict goes as it is, as OpenAI takes one.

// schemaKeys are the keywords responseJsonSchema honours (genai v1.77.0
// types.go, GenerationConfig.ResponseJsonSchema, which lists them).
var schemaKeys = map[string]bool{"$id": true, "$defs": true, "$ref": true, "$anchor": true, "type": true,
	"format": true, "title": true, "description": true, "enum": true, "items": true, "prefixItems": true,
	"minItems": true, "maxItems": true, "minimum": true, "maximum": true, "anyOf": true, "oneOf": true,
	"properties": true, "additionalProperties": true, "required": true, "propertyOrdering": true}

// formatField is the client's name for the schema, which the paths
// Unhonoured gives start from.
const formatField = "response_format.json_schema.schema"

// formatUnhonoured names the first keyword of a strict schema Gemini
// would ignore, "" when it can hold the answer to f.
func formatUnhonoured(f *llm.ResponseFormat) string {
	if f == nil || f.Type != llm.FormatJSONSchema || !f.Strict {
		return ""
	}
	var root any
	if err := json.Unmarshal(f.Schema, &root); err != nil {
		return formatField
	}
	return ignoredKeyword(root, formatField)
}

func ignoredKeyword(s any, path string) string {
	node, ok := s.(map[string]any)
	if !ok {
		return ""
	}
	keys := slices.Sorted(maps.Keys(node))
	for _, k := range keys {
		if !schemaKeys[k] {
			return path + "." + k
		}
	}
	for _, k := range keys {
		var p string
		switch v := node[k].(type) {
		case map[string]any:
			switch k {
			case "properties", "$defs":
				for _, name := range slices.Sorted(maps.Keys(v)) {
					if p = ignoredKeyword(v[name], path+"."+k+"."+name); p != "" {
						return p
					}
				}
			case "items", "additionalProperties":
				p = ignoredKeyword(v, path+"."+k)
			}
		case []any:
			if k == "anyOf" || k == "oneOf" || k == "prefixItems" {
				for i, sub := range v {
					if p = ignoredKeyword(sub, path+"."+k+"["+strconv.Itoa(i)+"]"); p != "" {
						return p
					}
				}
			}
		}
		if p != "" {
			return p
		}
	}
	return ""
}

// setFormat puts f into cfg: the JSON mime type, and a schema's map.
func setFormat(cfg *genai.GenerateContentConfig, f *llm.ResponseFormat) error {
	if f == nil {
		return nil
	}
	switch f.Type {
	case llm.FormatJSONObject:
	case llm.FormatJSONSchema:
		var schema map[string]any
		if err := json.Unmarshal(f.Schema, &schema); err != nil || schema == nil {
			return errors.New("response format: the schema is not a JSON object")
		}
		cfg.ResponseJsonSchema = schema
	default:
		return fmt.Errorf("response format %q is not one Gemini takes", f.Type)
	}
	cfg.ResponseMIMEType = "application/json"
	return nil
}
