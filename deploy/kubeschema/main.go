// Command kubeschema writes kubeconform's per-kind JSON schemas from the
// Kubernetes OpenAPI (swagger 2.0) document that the k8s.io/kubernetes
// module ships, so the chart is validated with no download beyond the Go
// module proxy. It does what the schemas kubeconform fetches by default
// were made with: each kind's definition with its references inlined, the
// int-or-string and quantity types widened to what manifests write, null
// allowed where a field is optional, and (strict) no unknown fields.
// -crd adds a CustomResourceDefinition's kinds (the ServiceMonitor, from
// the prometheus-operator module's CRD files) the same way.
//
//	go run ./deploy/kubeschema -swagger .../api/openapi-spec/swagger.json [-crd FILE.yaml ...] -out DIR
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"
)

type gvk struct{ Group, Version, Kind string }

func main() {
	swagger := flag.String("swagger", "", "the Kubernetes swagger.json")
	out := flag.String("out", "", "directory for the schemas")
	var crds []string
	flag.Func("crd", "a CustomResourceDefinition YAML file (repeatable)", func(s string) error {
		crds = append(crds, s)
		return nil
	})
	flag.Parse()
	err := run(*swagger, *out)
	for _, c := range crds {
		if err == nil {
			err = runCRD(c, *out)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "kubeschema:", err)
		os.Exit(1)
	}
}

// runCRD writes one schema per served version of the CRD in path.
func runCRD(path, out string) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var crd struct {
		Spec struct {
			Group string `yaml:"group"`
			Names struct {
				Kind string `yaml:"kind"`
			} `yaml:"names"`
			Versions []struct {
				Name   string `yaml:"name"`
				Schema struct {
					OpenAPIV3Schema map[string]any `yaml:"openAPIV3Schema"`
				} `yaml:"schema"`
			} `yaml:"versions"`
		} `yaml:"spec"`
	}
	if err := yaml.Unmarshal(raw, &crd); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if len(crd.Spec.Versions) == 0 {
		return fmt.Errorf("%s: not a CustomResourceDefinition with versions", path)
	}
	for _, v := range crd.Spec.Versions {
		body, err := json.Marshal(walk(nil, v.Schema.OpenAPIV3Schema, nil))
		if err != nil {
			return err
		}
		name := fileName(gvk{Group: crd.Spec.Group, Version: v.Name, Kind: crd.Spec.Names.Kind})
		if err := os.WriteFile(filepath.Join(out, name), body, 0o644); err != nil {
			return err
		}
		fmt.Printf("kubeschema: %s from %s\n", name, filepath.Base(path))
	}
	return nil
}

func run(swagger, out string) error {
	raw, err := os.ReadFile(swagger)
	if err != nil {
		return err
	}
	var doc struct {
		Definitions map[string]map[string]any `json:"definitions"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return fmt.Errorf("%s: %w", swagger, err)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	n := 0
	for name, def := range doc.Definitions {
		kinds, _ := def["x-kubernetes-group-version-kind"].([]any)
		for _, k := range kinds {
			b, _ := json.Marshal(k)
			var g gvk
			if err := json.Unmarshal(b, &g); err != nil || g.Kind == "" {
				continue
			}
			schema := inline(doc.Definitions, name, map[string]bool{})
			body, err := json.Marshal(schema)
			if err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(out, fileName(g)), body, 0o644); err != nil {
				return err
			}
			n++
		}
	}
	if n == 0 {
		return fmt.Errorf("%s: no kinds found", swagger)
	}
	fmt.Printf("kubeschema: %d schemas in %s\n", n, out)
	return nil
}

// fileName is kubeconform's {{ .ResourceKind }}{{ .KindSuffix }}.json:
// the group's first label and the version ("statefulset-apps-v1").
func fileName(g gvk) string {
	suffix := ""
	if g.Group != "" {
		suffix = "-" + strings.ToLower(strings.Split(g.Group, ".")[0])
	}
	return strings.ToLower(g.Kind) + suffix + "-" + strings.ToLower(g.Version) + ".json"
}

// inline returns the definition name with every $ref replaced by what it
// names. seen breaks the few recursive types (JSONSchemaProps): a cycle
// accepts anything, as the published standalone schemas do.
func inline(defs map[string]map[string]any, name string, seen map[string]bool) any {
	switch name {
	case "io.k8s.apimachinery.pkg.util.intstr.IntOrString":
		return map[string]any{"oneOf": []any{map[string]any{"type": "string"}, map[string]any{"type": "integer"}}}
	case "io.k8s.apimachinery.pkg.api.resource.Quantity":
		return map[string]any{"oneOf": []any{map[string]any{"type": "string"}, map[string]any{"type": "number"}}}
	}
	if seen[name] {
		return map[string]any{}
	}
	seen[name] = true
	defer delete(seen, name)
	return walk(defs, defs[name], seen)
}

func walk(defs map[string]map[string]any, node any, seen map[string]bool) any {
	switch v := node.(type) {
	case map[string]any:
		if ref, ok := v["$ref"].(string); ok {
			return inline(defs, strings.TrimPrefix(ref, "#/definitions/"), seen)
		}
		out := make(map[string]any, len(v)+1)
		for k, child := range v {
			switch k {
			case "description", "x-kubernetes-group-version-kind", "x-kubernetes-patch-strategy",
				"x-kubernetes-patch-merge-key", "x-kubernetes-list-type", "x-kubernetes-list-map-keys",
				"x-kubernetes-map-type", "x-kubernetes-unions":
				continue
			case "properties":
				props := map[string]any{}
				for p, s := range child.(map[string]any) {
					props[p] = nullable(walk(defs, s, seen))
				}
				out[k] = props
			default:
				out[k] = walk(defs, child, seen)
			}
		}
		if _, ok := out["properties"]; ok && v["x-kubernetes-preserve-unknown-fields"] != true {
			if _, set := out["additionalProperties"]; !set {
				out["additionalProperties"] = false // strict: an unknown field is an error
			}
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, child := range v {
			out[i] = walk(defs, child, seen)
		}
		return out
	}
	return node
}

// nullable lets an optional field be written as null, as YAML templates do
// ("key:" with nothing after it).
func nullable(s any) any {
	m, ok := s.(map[string]any)
	if !ok {
		return s
	}
	if t, ok := m["type"].(string); ok {
		c := make(map[string]any, len(m))
		for k, v := range m {
			c[k] = v
		}
		c["type"] = []any{t, "null"}
		return c
	}
	return s
}
