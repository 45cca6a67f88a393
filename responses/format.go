package responses

import (
	"encoding/json"

	"github.com/voxgate/voxgate/llm"
)

// TextFormat is text.format as the spec has it
// (TextResponseFormatConfiguration): "text", "json_object", or
// "json_schema" with its name, description, schema and strict. A
// response says back the one it was asked.
type TextFormat struct {
	Type        string          `json:"type"`
	Name        string          `json:"name,omitempty"`
	Description string          `json:"description,omitempty"`
	Schema      json.RawMessage `json:"schema,omitempty"`
	Strict      *bool           `json:"strict,omitempty"`
}

// decodeText reads the request's text with the strictness of the rest
// of the body, naming the member at fault; the format it returns is
// {"type": "text"} when none was asked.
func decodeText(raw json.RawMessage) (TextFormat, error) {
	text := TextFormat{Type: "text"}
	if !set(raw) {
		return text, nil
	}
	var param struct {
		Format    json.RawMessage `json:"format"`
		Verbosity *string         `json:"verbosity"`
	}
	if err := decodeStrict(raw, &param); err != nil {
		return text, invalidField("text", "%v; it is {\"format\": {...}}", err)
	}
	if param.Verbosity != nil {
		return text, invalidField("text.verbosity", "not acted on by this gateway; leave it out")
	}
	if !set(param.Format) {
		return text, nil
	}
	const at = "text.format"
	var f struct {
		Type        *string         `json:"type"`
		Name        *string         `json:"name"`
		Description *string         `json:"description"`
		Schema      json.RawMessage `json:"schema"`
		Strict      *bool           `json:"strict"`
	}
	if err := decodeStrict(param.Format, &f); err != nil {
		return text, invalidField(at, "%v; it is {\"type\": \"text\"}, {\"type\": \"json_object\"} or {\"type\": \"json_schema\", \"name\": ..., \"schema\": {...}}", err)
	}
	if f.Type == nil {
		return text, invalidField(at+".type", "required: \"text\", \"json_object\" or \"json_schema\"")
	}
	schemaOnly := f.Name != nil || f.Description != nil || f.Schema != nil || f.Strict != nil
	switch *f.Type {
	case "text", llm.FormatJSONObject:
		if schemaOnly {
			return text, invalidField(at, "name, description, schema and strict are only for type \"json_schema\"")
		}
		text.Type = *f.Type
		return text, nil
	case llm.FormatJSONSchema:
	default:
		return text, invalidField(at+".type", "%q is not \"text\", \"json_object\" or \"json_schema\"", *f.Type)
	}
	var schema map[string]any
	switch {
	case f.Name == nil:
		return text, invalidField(at+".name", "required")
	case !toolNameRE.MatchString(*f.Name):
		return text, invalidField(at+".name", "1 to 64 letters, digits, _ or -")
	case !set(f.Schema):
		return text, invalidField(at+".schema", "required")
	case json.Unmarshal(f.Schema, &schema) != nil || schema == nil:
		return text, invalidField(at+".schema", "must be a JSON Schema object")
	}
	text = TextFormat{Type: llm.FormatJSONSchema, Name: *f.Name, Schema: f.Schema, Strict: f.Strict}
	if f.Description != nil {
		text.Description = *f.Description
	}
	return text, nil
}

// llmFormat is the router's form of f: nil for text.
func (f TextFormat) llmFormat() *llm.ResponseFormat {
	switch f.Type {
	case llm.FormatJSONObject:
		return &llm.ResponseFormat{Type: llm.FormatJSONObject}
	case llm.FormatJSONSchema:
		return &llm.ResponseFormat{Type: llm.FormatJSONSchema, Name: f.Name, Description: f.Description,
			Schema: f.Schema, Strict: f.Strict != nil && *f.Strict}
	}
	return nil
}
