package core

import (
	"fmt"

	"go.yaml.in/yaml/v3"
)

// yamlToJSON converts a parsed YAML document into the JSON value model the
// schema compiler expects (map[string]any, []any, string, int64, float64,
// bool, nil). Walking yaml.Node keeps scalars exact: a timestamp-looking
// string stays a string instead of becoming a time.Time.
//
// It also rewrites the OpenAPI 3.0 keyword `nullable: true`, which the 3.1
// document still uses in places (for example the `finish_reason` and `usage`
// of stream chunks), into JSON Schema's `anyOf: [schema, {type: null}]`.
// JSON Schema 2020-12 ignores `nullable`, so without this the real wire
// format (`"finish_reason": null`) would fail its own schema.
func yamlToJSON(n *yaml.Node) (any, error) {
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return yamlToJSON(n.Content[0])
	case yaml.AliasNode:
		return yamlToJSON(n.Alias)
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			v, err := yamlToJSON(c)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case yaml.MappingNode:
		return yamlMapping(n)
	case yaml.ScalarNode:
		return yamlScalar(n)
	}
	return nil, fmt.Errorf("line %d: unsupported YAML node kind %d", n.Line, n.Kind)
}

func yamlMapping(n *yaml.Node) (any, error) {
	out := make(map[string]any, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		// Keys such as response codes (200:) may be YAML ints; JSON keys are strings.
		key := n.Content[i].Value
		v, err := yamlToJSON(n.Content[i+1])
		if err != nil {
			return nil, err
		}
		out[key] = v
	}
	if nullable, ok := out["nullable"].(bool); ok {
		delete(out, "nullable")
		if nullable {
			return map[string]any{"anyOf": []any{out, map[string]any{"type": "null"}}}, nil
		}
	}
	return out, nil
}

func yamlScalar(n *yaml.Node) (any, error) {
	switch n.ShortTag() {
	case "!!null":
		return nil, nil
	case "!!bool":
		var b bool
		if err := n.Decode(&b); err != nil {
			return nil, fmt.Errorf("line %d: %w", n.Line, err)
		}
		return b, nil
	case "!!int":
		var i int64
		if err := n.Decode(&i); err != nil {
			// Out of int64 range: keep the magnitude as a float, as JSON would.
			var f float64
			if err := n.Decode(&f); err != nil {
				return nil, fmt.Errorf("line %d: %w", n.Line, err)
			}
			return f, nil
		}
		return i, nil
	case "!!float":
		var f float64
		if err := n.Decode(&f); err != nil {
			return nil, fmt.Errorf("line %d: %w", n.Line, err)
		}
		return f, nil
	default:
		return n.Value, nil
	}
}
