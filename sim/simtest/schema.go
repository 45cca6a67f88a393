package simtest

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Conforms fails tb unless text is JSON that schema (a JSON Schema
// document) accepts: what a structured answer must be, whichever
// endpoint carried it.
func Conforms(tb testing.TB, schema any, text string) {
	tb.Helper()
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource("voxgate:///answer.json", schema); err != nil {
		tb.Fatalf("schema: %v", err)
	}
	s, err := c.Compile("voxgate:///answer.json")
	if err != nil {
		tb.Fatalf("schema: %v", err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(text)))
	if err != nil {
		tb.Fatalf("answer %q is not JSON: %v", text, err)
	}
	if err := s.Validate(v); err != nil {
		tb.Fatalf("answer %s does not conform: %v", text, err)
	}
}

// Schema reads a JSON Schema document as Conforms and openai-go's params
// take it: a map with float64 numbers (openai-go sends a json.Number as
// a string).
func Schema(tb testing.TB, doc string) map[string]any {
	tb.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(doc), &m); err != nil {
		tb.Fatalf("schema %s: %v", doc, err)
	}
	return m
}
