package realtime

import (
	"strings"
	"testing"
)

// TestRealtimeFieldSetsMatchSpec (with specSchemas from chatspec_test.go)
// derives the property sets of the GA request
// schemas from the official spec and compares them with the sets the
// simulator checks requests against, so neither drifts.
func TestRealtimeFieldSetsMatchSpec(t *testing.T) {
	t.Parallel()
	schemas := specSchemas(t)
	realtimeOnly := func(name string) FieldSet { return specFields(schemas, schemas[name], 0) }
	secret := specFields(schemas, schemas["RealtimeCreateClientSecretRequest"], 0)
	// The request's session is realtime or transcription; the simulator
	// refuses transcription sessions by type, so it checks the realtime one.
	secret["session"] = realtimeOnly("RealtimeSessionCreateRequestGA")
	for _, tc := range []struct {
		name      string
		got, want FieldSet
	}{
		{"RealtimeSessionCreateRequestGA", sessionFields(), realtimeOnly("RealtimeSessionCreateRequestGA")},
		{"RealtimeResponseCreateParams", responseFields(), realtimeOnly("RealtimeResponseCreateParams")},
		{"RealtimeCreateClientSecretRequest", clientSecretFields(), secret},
	} {
		for _, d := range diffFields(tc.got, tc.want, tc.name) {
			t.Error(d)
		}
	}
}

// specFields is the property set a schema allows: the union of its
// alternatives (anyOf, oneOf, allOf), its properties, and for an array its
// items' set under "[]". Free-form objects (additionalProperties) and
// scalars are nil.
func specFields(schemas map[string]any, s any, depth int) FieldSet {
	m, _ := s.(map[string]any)
	for m != nil {
		ref, ok := m["$ref"].(string)
		if !ok {
			break
		}
		m, _ = schemas[strings.TrimPrefix(ref, "#/components/schemas/")].(map[string]any)
	}
	if m == nil || depth > 12 {
		return nil
	}
	var out FieldSet
	add := func(more FieldSet) {
		if more == nil {
			return
		}
		if out == nil {
			out = FieldSet{}
		}
		for k, v := range more {
			out[k] = mergeFields(out[k], v)
		}
	}
	for _, key := range []string{"anyOf", "oneOf", "allOf"} {
		alts, _ := m[key].([]any)
		for _, a := range alts {
			add(specFields(schemas, a, depth+1))
		}
	}
	if props, ok := m["properties"].(map[string]any); ok {
		if ap, set := m["additionalProperties"]; set && ap != false {
			return out // a map of arbitrary keys
		}
		own := FieldSet{}
		for k, v := range props {
			own[k] = specFields(schemas, v, depth+1)
		}
		add(own)
	}
	if m["type"] == "array" {
		if items := specFields(schemas, m["items"], depth+1); items != nil {
			add(FieldSet{"[]": items})
		}
	}
	return out
}

func mergeFields(a, b FieldSet) FieldSet {
	if a == nil {
		return b
	}
	for k, v := range b {
		a[k] = mergeFields(a[k], v)
	}
	return a
}

// diffFields lists the differences between two sets, by path.
func diffFields(got, want FieldSet, path string) []string {
	var out []string
	for k, w := range want {
		g, ok := got[k]
		switch {
		case !ok:
			out = append(out, path+"."+k+": in the spec, not accepted by the simulator")
		case (g == nil) != (w == nil):
			out = append(out, path+"."+k+": checked by one side only")
		default:
			out = append(out, diffFields(g, w, path+"."+k)...)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			out = append(out, path+"."+k+": accepted by the simulator, not in the spec")
		}
	}
	return out
}
