package gemini

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"

	"github.com/voxgate/voxgate/sim/openai"
)

// Structured output (docs/sim.md, "Gemini structured output"):
// generationConfig.responseMimeType application/json asks for JSON, and
// responseJsonSchema (JSON Schema) or responseSchema (Google's OpenAPI
// subset) for JSON a schema accepts. The API refuses a mime type it does
// not know and a schema without the JSON mime type; schema keywords
// outside its list it ignores, and so does the simulator's answer.

// gemMimeTypes are the response mime types the API takes, in its message's
// order.
var gemMimeTypes = []string{"text/plain", "application/json", "application/xml", "application/yaml", "text/x.enum"}

// gemSchemaKeys are the JSON Schema keywords responseJsonSchema honours
// (genai v1.77.0 types.go, GenerationConfig.ResponseJsonSchema); any other
// is ignored. type, nullable and the rest of responseSchema's fields are
// its OpenAPI names.
var gemSchemaKeys = []string{"$id", "$defs", "$ref", "$anchor", "type", "format", "title", "description", "enum",
	"items", "prefixItems", "minItems", "maxItems", "minimum", "maximum", "anyOf", "oneOf", "properties",
	"additionalProperties", "required", "propertyOrdering", "nullable"}

// gemGeneration is the part of generationConfig the simulator reads.
type gemGeneration struct {
	MaxOutputTokens *int `json:"maxOutputTokens"`
	ThinkingConfig  *struct {
		ThinkingLevel string `json:"thinkingLevel"`
	} `json:"thinkingConfig"`
	ResponseMimeType   string          `json:"responseMimeType"`
	ResponseSchema     json.RawMessage `json:"responseSchema"`
	ResponseJSONSchema json.RawMessage `json:"responseJsonSchema"`
}

const gemConfigWhere = "* GenerateContentRequest.generation_config."

// responseFormat checks the structured-output fields of gc and sets the
// format the script's default answer keeps to.
func responseFormat(req *openai.ChatRequest, gc *gemGeneration) error {
	mime := gc.ResponseMimeType
	if mime != "" && !slices.Contains(gemMimeTypes, mime) {
		return gemInvalid(gemConfigWhere + "response_mime_type: allowed mimetypes are text/plain, application/json, application/xml, application/yaml and text/x.enum\n")
	}
	hasSchema, hasJSONSchema := present(gc.ResponseSchema), present(gc.ResponseJSONSchema)
	switch {
	case hasSchema && hasJSONSchema:
		return gemInvalid(gemConfigWhere + "response_schema: response_schema and response_json_schema are mutually exclusive\n")
	case hasJSONSchema && mime != "application/json":
		return gemInvalid(gemConfigWhere + "response_mime_type: application/json is required when response_json_schema is set\n")
	case hasSchema && mime != "application/json" && mime != "text/x.enum":
		return gemInvalid(gemConfigWhere + "response_mime_type: application/json or text/x.enum is required when response_schema is set\n")
	}
	schema := gc.ResponseJSONSchema
	if hasSchema {
		schema = gc.ResponseSchema
	}
	if hasSchema || hasJSONSchema {
		var root any
		if err := json.Unmarshal(schema, &root); err != nil {
			return gemInvalid("Invalid JSON payload received. " + err.Error())
		}
		if _, ok := root.(map[string]any); !ok {
			if _, ok := root.(bool); !ok || hasSchema {
				return gemInvalid(gemConfigWhere + "response_schema: the schema must be an object\n")
			}
		}
		if mime == "application/json" {
			b, _ := json.Marshal(honoured(root)) // maps, lists and scalars from JSON: cannot fail
			req.Format = &openai.ResponseFormat{Type: "json_schema", Schema: b}
		}
		return nil
	}
	if mime == "application/json" {
		req.Format = &openai.ResponseFormat{Type: "json_object"}
	}
	return nil
}

func present(raw json.RawMessage) bool { return len(raw) > 0 && string(raw) != "null" }

// honoured is the schema as the API holds an answer to it: keywords it
// ignores dropped, oneOf read as anyOf (as the API reads it), OpenAPI's
// upper-case types (responseSchema's) in JSON Schema's case.
func honoured(s any) any {
	switch v := s.(type) {
	case map[string]any:
		out := map[string]any{}
		for _, k := range slices.Sorted(maps.Keys(v)) {
			if !slices.Contains(gemSchemaKeys, k) {
				continue
			}
			val := v[k]
			switch k {
			case "type":
				if t, ok := val.(string); ok {
					val = strings.ToLower(t)
				}
			case "properties", "$defs":
				if m, ok := val.(map[string]any); ok {
					props := map[string]any{}
					for name, sub := range m {
						props[name] = honoured(sub)
					}
					val = props
				}
			case "items", "additionalProperties":
				val = honoured(val)
			case "anyOf", "oneOf", "prefixItems":
				if list, ok := val.([]any); ok {
					subs := make([]any, len(list))
					for i, sub := range list {
						subs[i] = honoured(sub)
					}
					val = subs
				}
			}
			if k == "oneOf" {
				k = "anyOf"
			}
			out[k] = val
		}
		return out
	}
	return s
}
