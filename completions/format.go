package completions

import (
	"encoding/json"

	"github.com/voxgate/voxgate/llm"
)

// responseFormat is response_format as the spec has it
// (ResponseFormatText, ResponseFormatJsonObject, ResponseFormatJsonSchema).
type responseFormat struct {
	Type       *string     `json:"type"`
	JSONSchema *jsonSchema `json:"json_schema"`
}

type jsonSchema struct {
	Name        *string         `json:"name"`
	Description *string         `json:"description"`
	Schema      json.RawMessage `json:"schema"`
	Strict      *bool           `json:"strict"`
}

// decodeResponseFormat reads response_format with the strictness of the
// rest of the body, naming the member at fault: nil for absent, null or
// text (what every answer is), else the JSON the answer must be.
func decodeResponseFormat(raw json.RawMessage) (*llm.ResponseFormat, error) {
	const at = "response_format"
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var f responseFormat
	if err := decodeStrict(raw, &f); err != nil {
		return nil, invalidField(at, "%v; it is {\"type\": \"text\"}, {\"type\": \"json_object\"} or {\"type\": \"json_schema\", \"json_schema\": {...}}", err)
	}
	if f.Type == nil {
		return nil, invalidField(at+".type", "required: \"text\", \"json_object\" or \"json_schema\"")
	}
	if *f.Type != llm.FormatJSONSchema && f.JSONSchema != nil {
		return nil, invalidField(at+".json_schema", "only with type \"json_schema\"")
	}
	switch *f.Type {
	case "text":
		return nil, nil
	case llm.FormatJSONObject:
		return &llm.ResponseFormat{Type: llm.FormatJSONObject}, nil
	case llm.FormatJSONSchema:
	default:
		return nil, invalidField(at+".type", "%q is not \"text\", \"json_object\" or \"json_schema\"", *f.Type)
	}
	js := f.JSONSchema
	switch {
	case js == nil:
		return nil, invalidField(at+".json_schema", "required with type \"json_schema\"")
	case js.Name == nil:
		return nil, invalidField(at+".json_schema.name", "required")
	case !toolNameRE.MatchString(*js.Name):
		return nil, invalidField(at+".json_schema.name", "1 to 64 letters, digits, _ or -")
	}
	out := &llm.ResponseFormat{Type: llm.FormatJSONSchema, Name: *js.Name, Strict: js.Strict != nil && *js.Strict}
	if js.Description != nil {
		out.Description = *js.Description
	}
	if len(js.Schema) > 0 && string(js.Schema) != "null" {
		var schema map[string]any
		if json.Unmarshal(js.Schema, &schema) != nil || schema == nil {
			return nil, invalidField(at+".json_schema.schema", "must be a JSON Schema object")
		}
		out.Schema = js.Schema
	}
	return out, nil
}
