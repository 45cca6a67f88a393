package core

// The spec writes its one self-nesting schema (CompoundFilter, a filter of
// filters) in JSON Schema 2019-09's words, "$recursiveAnchor: true" and
// "$recursiveRef: '#'", which 2020-12 (the draft OpenAPI 3.1 names) does
// not have: the compiler refuses every schema that reaches it, among them
// Response and every Responses stream event (through file_search's
// filters). A schema that anchors itself this way means the same as one
// that refers to itself by name, so it is rewritten to that.

// resolveRecursiveRefs rewrites doc's components/schemas in place.
func resolveRecursiveRefs(doc any) {
	root, _ := doc.(map[string]any)
	comps, _ := root["components"].(map[string]any)
	schemas, _ := comps["schemas"].(map[string]any)
	for name, s := range schemas {
		m, ok := s.(map[string]any)
		if !ok || m["$recursiveAnchor"] != true {
			continue
		}
		delete(m, "$recursiveAnchor")
		replaceRecursiveRef(m, "#/components/schemas/"+name)
	}
}

func replaceRecursiveRef(v any, ref string) {
	switch n := v.(type) {
	case map[string]any:
		if r, ok := n["$recursiveRef"]; ok && r == "#" {
			delete(n, "$recursiveRef")
			n["$ref"] = ref
		}
		for _, c := range n {
			replaceRecursiveRef(c, ref)
		}
	case []any:
		for _, c := range n {
			replaceRecursiveRef(c, ref)
		}
	}
}
