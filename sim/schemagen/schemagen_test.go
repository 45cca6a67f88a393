package schemagen_test

import (
	"encoding/json"
	"testing"

	"github.com/voxgate/voxgate/sim/schemagen"
	"github.com/voxgate/voxgate/sim/simtest"
)

// TestJSONConforms: the value made from each schema is one the schema
// accepts, by the project's JSON Schema validator, and the same for the
// same schema.
func TestJSONConforms(t *testing.T) {
	t.Parallel()
	for _, schema := range []string{
		`{"type":"object","additionalProperties":false,"required":["a","b"],"properties":{"a":{"type":"string","minLength":12,"maxLength":20},"b":{"type":"integer","minimum":4,"maximum":9},"c":{"type":"string"}}}`,
		`{"type":"array","minItems":3,"maxItems":3,"items":{"$ref":"#/$defs/day"},"$defs":{"day":{"type":"string","format":"date"}}}`,
		`{"anyOf":[{"type":"null"},{"type":"object","required":["id"],"properties":{"id":{"type":"string","format":"uuid"}}}]}`,
		`{"type":["number","null"],"exclusiveMinimum":2.5}`,
		`{"enum":["x","y"]}`,
		`{"const":{"k":[1,2]}}`,
		`{"type":"object","required":["next"],"properties":{"next":{"$ref":"#"}}}`,
	} {
		got := schemagen.JSON(json.RawMessage(schema))
		if schema != `{"type":"object","required":["next"],"properties":{"next":{"$ref":"#"}}}` {
			simtest.Conforms(t, simtest.Schema(t, schema), got)
		} else if !json.Valid([]byte(got)) {
			t.Errorf("a schema whose $ref it cannot follow: %q is not JSON", got)
		}
		if again := schemagen.JSON(json.RawMessage(schema)); again != got {
			t.Errorf("%s: %s then %s", schema, got, again)
		}
	}
	if got := schemagen.JSON(json.RawMessage(`[1`)); got != "{}" {
		t.Errorf("an unreadable schema: %s, want {}", got)
	}
}
