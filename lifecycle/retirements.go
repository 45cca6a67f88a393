package lifecycle

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/voxgate/voxgate/internal/modelname"
)

//go:embed retirements.yaml
var embeddedRetirements []byte

// Retirement is one model's announced end.
type Retirement struct {
	Shutdown    time.Time // the UTC day it stops answering
	Replacement string    // what the provider names instead
}

// Retirements is the embedded table of announced shutdowns, by model.
type Retirements struct {
	Source string
	models map[string]Retirement
}

// DefaultRetirements is the table embedded in the binary.
func DefaultRetirements() (*Retirements, error) { return LoadRetirements(embeddedRetirements) }

// LoadRetirements parses a table in retirements.yaml's shape; unknown keys,
// a bad date or a missing replacement are errors naming the model.
func LoadRetirements(data []byte) (*Retirements, error) {
	var f struct {
		Source string `yaml:"source"`
		Models map[string]struct {
			Shutdown    string `yaml:"shutdown"`
			Replacement string `yaml:"replacement"`
		} `yaml:"models"`
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("lifecycle: retirements: %w", err)
	}
	if f.Source == "" {
		return nil, errors.New("lifecycle: retirements: source is required")
	}
	r := &Retirements{Source: f.Source, models: make(map[string]Retirement, len(f.Models))}
	for name, m := range f.Models {
		day, err := time.Parse(time.DateOnly, m.Shutdown)
		if err != nil {
			return nil, fmt.Errorf("lifecycle: retirements: %s: shutdown %q is not a YYYY-MM-DD date", name, m.Shutdown)
		}
		if m.Replacement == "" {
			return nil, fmt.Errorf("lifecycle: retirements: %s: replacement is required", name)
		}
		r.models[name] = Retirement{Shutdown: day, Replacement: m.Replacement}
	}
	return r, nil
}

// Lookup is model's retirement (its own, else its family's), if announced.
func (r *Retirements) Lookup(model string) (Retirement, bool) {
	return modelname.Lookup(r.models, model)
}
