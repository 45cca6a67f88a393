package responses

import (
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/voxgate/voxgate/sim/core"
)

// TestCreateParamsMatchSpec keeps createParams equal to the properties of
// the spec's CreateResponse (through its $ref and allOf parts), and
// builtinTools to the spec's Tool types other than function.
func TestCreateParamsMatchSpec(t *testing.T) {
	path, err := core.FindSpec()
	if errors.Is(err, core.ErrSpecNotFound) && os.Getenv("CI") == "" {
		t.Skipf("OpenAI spec not available (set %s): %v", core.SpecEnv, err)
	}
	if err != nil {
		t.Fatal(err)
	}
	schemas, err := core.ReadSpecSchemas(path)
	if err != nil {
		t.Fatal(err)
	}
	resolve := func(s map[string]any) map[string]any {
		if ref, ok := s["$ref"].(string); ok {
			s, _ = schemas[strings.TrimPrefix(ref, "#/components/schemas/")].(map[string]any)
		}
		return s
	}
	props := map[string]bool{}
	var walk func(s map[string]any)
	walk = func(s map[string]any) {
		s = resolve(s)
		for _, part := range anyList(s["allOf"]) {
			walk(part.(map[string]any))
		}
		for name := range mapOf(s["properties"]) {
			props[name] = true
		}
	}
	walk(mapOf(schemas["CreateResponse"]))
	for name := range props {
		if !createParams[name] {
			t.Errorf("spec parameter %q missing from createParams", name)
		}
	}
	for name := range createParams {
		if !props[name] {
			t.Errorf("createParams has %q, which the spec does not list", name)
		}
	}
	var types []string
	for _, alt := range anyList(mapOf(schemas["Tool"])["anyOf"]) {
		tool := resolve(alt.(map[string]any))
		typ := mapOf(mapOf(tool["properties"])["type"])
		for _, v := range anyList(typ["enum"]) {
			types = append(types, v.(string))
		}
		if c, ok := typ["const"].(string); ok {
			types = append(types, c)
		}
	}
	for _, typ := range types {
		if typ != "function" && !slices.Contains(builtinTools, typ) {
			t.Errorf("spec tool type %q missing from builtinTools", typ)
		}
	}
	for _, typ := range builtinTools {
		if !slices.Contains(types, typ) {
			t.Errorf("builtinTools has %q, which the spec's Tool does not list", typ)
		}
	}
}

func mapOf(v any) map[string]any { m, _ := v.(map[string]any); return m }
func anyList(v any) []any        { l, _ := v.([]any); return l }
