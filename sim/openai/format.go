package openai

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/voxgate/voxgate/sim/core"
)

// ResponseFormat is a parsed response_format (the spec's
// ResponseFormatText, ResponseFormatJsonObject, ResponseFormatJsonSchema):
// Type is "text", "json_object" or "json_schema"; the rest is the
// json_schema member's.
type ResponseFormat struct {
	Type        string
	Name        string
	Description string
	Schema      json.RawMessage
	Strict      bool
}

// JSON reports whether the answer is to be JSON.
func (f *ResponseFormat) JSON() bool {
	return f != nil && (f.Type == "json_object" || f.Type == "json_schema")
}

// decodeResponseFormat checks a request's response_format as the API
// does, with its errors, and returns it parsed; nil when absent.
func decodeResponseFormat(raw json.RawMessage, msgs []ChatMessage) (*ResponseFormat, error) {
	const param = "response_format"
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if raw[0] != '{' {
		return nil, core.ErrInvalidType(param, "an object", core.JSONKind(raw))
	}
	var body struct {
		Type       *string         `json:"type"`
		JSONSchema json.RawMessage `json:"json_schema"`
	}
	if err := json.Unmarshal(raw, &body); err != nil {
		return nil, core.JSONError(err, param)
	}
	if body.Type == nil {
		return nil, core.ErrMissingParam(param + ".type")
	}
	f := &ResponseFormat{Type: *body.Type}
	switch f.Type {
	case "text":
		return f, nil
	case "json_object":
		// The API refuses JSON mode unless the conversation asks for JSON,
		// lest the model write whitespace until its limit.
		for _, m := range msgs {
			if strings.Contains(strings.ToLower(m.Text), "json") {
				return f, nil
			}
		}
		return nil, core.ErrInvalidRequest("messages", "'messages' must contain the word 'json' in some form, to use 'response_format' of type 'json_object'.")
	case "json_schema":
	default:
		return nil, core.ErrInvalidValue(param+".type", fmt.Sprintf("Invalid value: '%s'. Supported values are: 'text', 'json_object', and 'json_schema'.", f.Type))
	}
	const at = param + ".json_schema"
	if len(body.JSONSchema) == 0 || string(body.JSONSchema) == "null" {
		return nil, core.ErrMissingParam(at)
	}
	var js struct {
		Name        *string         `json:"name"`
		Description *string         `json:"description"`
		Schema      json.RawMessage `json:"schema"`
		Strict      *bool           `json:"strict"`
	}
	if err := json.Unmarshal(body.JSONSchema, &js); err != nil {
		return nil, core.JSONError(err, at)
	}
	if js.Name == nil {
		return nil, core.ErrMissingParam(at + ".name")
	}
	if !ToolNamePattern.MatchString(*js.Name) {
		return nil, core.ErrInvalidValue(at+".name", fmt.Sprintf("Invalid '%s.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.", at))
	}
	f.Name, f.Strict = *js.Name, js.Strict != nil && *js.Strict
	if js.Description != nil {
		f.Description = *js.Description
	}
	if s := js.Schema; len(s) > 0 && string(s) != "null" {
		if s[0] != '{' {
			return nil, core.ErrInvalidType(at+".schema", "an object", core.JSONKind(s))
		}
		f.Schema = s
	}
	if f.Strict {
		if err := core.CheckStrictSchema(param, f.Name, f.Schema); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// formatAnswer is the text of a JSON-format answer with no rule's text:
// a value the schema accepts, or for JSON mode an object carrying the
// default answer.
func (cs *CompiledScript) formatAnswer(f *ResponseFormat, t *turn) string {
	if f.Type == "json_schema" {
		return SchemaJSON(f.Schema)
	}
	b, _ := json.Marshal(map[string]string{"answer": cs.answerText(t)})
	return string(b)
}
