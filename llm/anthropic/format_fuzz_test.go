package anthropic

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/voxgate/voxgate/llm"
)

// FuzzFormatUnhonoured feeds arbitrary schemas, as clients write them, to
// the check and to the encoder: neither panics; a schema the check passes
// encodes, its every object closed; a field it names is one of the
// client's.
func FuzzFormatUnhonoured(f *testing.F) {
	for _, s := range []string{
		`{"type":"object","properties":{"a":{"type":"integer","minimum":1}}}`,
		`{"$ref":"#/$defs/n","$defs":{"n":{"type":"object","properties":{"next":{"$ref":"#/$defs/n"}}}}}`,
		`{"$ref":"#"}`, `{"$ref":"#/a~1b/~0"}`, `{"anyOf":[{"$ref":"#/$defs/x"},true]}`,
		`{"type":["object","null"],"properties":{}}`, `{"enum":[{"a":1}]}`, `[]`, `true`, `{`,
	} {
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, schema []byte, jsonSchema bool) {
		rf := &llm.ResponseFormat{Type: llm.FormatJSONObject}
		if jsonSchema {
			rf = &llm.ResponseFormat{Type: llm.FormatJSONSchema, Name: "x", Schema: schema}
		}
		field := formatUnhonoured("claude-haiku-5-5", rf)
		if field != "" && !strings.HasPrefix(field, "response_format") {
			t.Fatalf("named %q", field)
		}
		oc, err := outputConfig(rf)
		if field == "" && err != nil {
			t.Fatalf("a schema the check passes does not encode: %v", err)
		}
		if err == nil {
			if _, err := json.Marshal(oc); err != nil {
				t.Fatalf("encoding: %v", err)
			}
		}
	})
}
