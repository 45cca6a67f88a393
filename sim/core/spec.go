package core

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"
)

// SpecEnv names the environment variable that points at the official OpenAI
// OpenAPI document. Without it, FindSpec walks up from the working directory.
const SpecEnv = "VOXGATE_OPENAI_SPEC"

// specRelPath is where the spec sits relative to some ancestor of the
// repository (CI runs the repo at X/main with the reference data at X/shared).
const specRelPath = "shared/reference/openai-openapi.yml"

// specURL is the resource name the document is registered under; schema
// references inside the spec ("#/components/schemas/...") resolve against it.
const specURL = "file:///openai-openapi.json"

// ErrSpecNotFound is returned by FindSpec when neither SpecEnv nor any
// ancestor directory provides the spec.
var ErrSpecNotFound = errors.New("sim: OpenAI spec not found")

// Spec validates JSON against the component schemas of the official OpenAI
// OpenAPI document. It is safe for concurrent use; each schema is compiled
// once, on first use.
type Spec struct {
	mu       sync.Mutex
	compiler *jsonschema.Compiler
	schemas  map[string]*jsonschema.Schema
}

// FindSpec returns the path of the OpenAI spec: $VOXGATE_OPENAI_SPEC when set,
// else the first shared/reference/openai-openapi.yml found walking up from the
// working directory.
func FindSpec() (string, error) {
	if p := os.Getenv(SpecEnv); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("%w: %s=%s: %v", ErrSpecNotFound, SpecEnv, p, err)
		}
		return p, nil
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("sim: find spec: %w", err)
	}
	for {
		p := filepath.Join(dir, specRelPath)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", ErrSpecNotFound
		}
		dir = parent
	}
}

// LoadSpec reads and parses the OpenAPI YAML at path. The file is large
// (several MB); load it once and share the result.
func LoadSpec(path string) (*Spec, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("sim: load spec: %w", err)
	}
	var root yaml.Node
	if err := yaml.Unmarshal(raw, &root); err != nil {
		return nil, fmt.Errorf("sim: parse spec %s: %w", path, err)
	}
	doc, err := yamlToJSON(&root)
	if err != nil {
		return nil, fmt.Errorf("sim: convert spec %s: %w", path, err)
	}
	resolveRecursiveRefs(doc)
	c := jsonschema.NewCompiler()
	// OpenAPI 3.1 component schemas are JSON Schema 2020-12.
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource(specURL, doc); err != nil {
		return nil, fmt.Errorf("sim: add spec: %w", err)
	}
	return &Spec{compiler: c, schemas: make(map[string]*jsonschema.Schema)}, nil
}

// ReadSpecSchemas reads #/components/schemas of the spec at path as plain
// data, for tests that check which names the spec lists rather than
// validate a body.
func ReadSpecSchemas(path string) (map[string]any, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var doc struct {
		Components struct {
			Schemas map[string]any `yaml:"schemas"`
		} `yaml:"components"`
	}
	err = yaml.Unmarshal(raw, &doc)
	return doc.Components.Schemas, err
}

// Validate checks data against #/components/schemas/<schema>.
func (s *Spec) Validate(schema string, data []byte) error {
	sch, err := s.compile(schema)
	if err != nil {
		return err
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("sim: %s: invalid JSON: %w", schema, err)
	}
	if err := sch.Validate(v); err != nil {
		return fmt.Errorf("sim: %s: %w", schema, err)
	}
	return nil
}

func (s *Spec) compile(schema string) (*jsonschema.Schema, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sch, ok := s.schemas[schema]; ok {
		return sch, nil
	}
	sch, err := s.compiler.Compile(specURL + "#/components/schemas/" + schema)
	if err != nil {
		return nil, fmt.Errorf("sim: compile schema %s: %w", schema, err)
	}
	s.schemas[schema] = sch
	return sch, nil
}
