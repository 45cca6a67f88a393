package openai

import (
	"errors"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/voxgate/voxgate/sim/core"
)

// These tests read the spec's schemas directly, for what the validator
// cannot check: which names the spec lists.

var (
	specSchemasOnce sync.Once
	specSchemasMap  map[string]any
	specSchemasErr  error
)

// specSchemas returns #/components/schemas of the official spec, parsed
// once per test binary; it skips like simtest.Spec when the file is absent.
func specSchemas(t *testing.T) map[string]any {
	t.Helper()
	specSchemasOnce.Do(func() {
		path, err := core.FindSpec()
		if err != nil {
			specSchemasErr = err
			return
		}
		specSchemasMap, specSchemasErr = core.ReadSpecSchemas(path)
	})
	if errors.Is(specSchemasErr, core.ErrSpecNotFound) && os.Getenv("CI") == "" {
		t.Skipf("OpenAI spec not available (set %s): %v", core.SpecEnv, specSchemasErr)
	}
	if specSchemasErr != nil {
		t.Fatalf("load OpenAI spec: %v", specSchemasErr)
	}
	return specSchemasMap
}

// specProperties collects the property names of a schema, following $ref
// and allOf as the spec composes CreateChatCompletionRequest.
func specProperties(t *testing.T, schemas map[string]any, name string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	var walk func(s map[string]any)
	walk = func(s map[string]any) {
		if ref, ok := s["$ref"].(string); ok {
			target, ok := schemas[strings.TrimPrefix(ref, "#/components/schemas/")].(map[string]any)
			if !ok {
				t.Fatalf("unresolved $ref %s", ref)
			}
			walk(target)
		}
		if all, ok := s["allOf"].([]any); ok {
			for _, part := range all {
				walk(part.(map[string]any))
			}
		}
		if props, ok := s["properties"].(map[string]any); ok {
			for p := range props {
				out[p] = true
			}
		}
	}
	root, ok := schemas[name].(map[string]any)
	if !ok {
		t.Fatalf("no schema %s", name)
	}
	walk(root)
	return out
}

// TestChatParamsMatchSpec checks that the parameters the simulator knows
// are exactly the spec's CreateChatCompletionRequest properties: one more
// would let through what the real API refuses, one fewer would refuse what
// it accepts.
func TestChatParamsMatchSpec(t *testing.T) {
	t.Parallel()
	want := specProperties(t, specSchemas(t), "CreateChatCompletionRequest")
	if len(want) < 30 || !want["messages"] || !want["max_completion_tokens"] {
		t.Fatalf("spec properties look wrong: %v", slices.Sorted(maps.Keys(want)))
	}
	for name := range want {
		if !chatParams[name] {
			t.Errorf("spec parameter %q is not in chatParams", name)
		}
	}
	for name := range chatParams {
		if !want[name] {
			t.Errorf("chatParams has %q, which the spec does not list", name)
		}
	}
}

// TestDefaultModelsInSpec checks that every default alias, snapshot and
// reasoning model is a model id the spec lists, and that each snapshot is
// a dated version of its alias.
func TestDefaultModelsInSpec(t *testing.T) {
	t.Parallel()
	chatModel, _ := specSchemas(t)["ChatModel"].(map[string]any)
	known := map[string]bool{}
	var collect func(v any)
	collect = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if enum, ok := v["enum"].([]any); ok {
				for _, e := range enum {
					if s, ok := e.(string); ok {
						known[s] = true
					}
				}
			}
			for _, sub := range v {
				collect(sub)
			}
		case []any:
			for _, sub := range v {
				collect(sub)
			}
		}
	}
	collect(chatModel)
	if !known["gpt-4o"] {
		t.Fatalf("ChatModel enum looks wrong: %d names", len(known))
	}
	for alias, snap := range DefaultModelAliases() {
		if !known[alias] || !known[snap] {
			t.Errorf("alias %s -> %s: in spec %v, %v; want both", alias, snap, known[alias], known[snap])
		}
		if !strings.HasPrefix(snap, alias+"-20") {
			t.Errorf("snapshot %s is not a dated %s", snap, alias)
		}
	}
	for _, m := range DefaultReasoningModels() {
		if !known[m] {
			t.Errorf("reasoning model %s is not in the spec", m)
		}
	}
}
