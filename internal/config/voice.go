package config

import (
	"fmt"
	"time"

	"go.yaml.in/yaml/v3"
)

// Voice is the voice section (DESIGN §6). Every field left out keeps the
// control plane's default (docs/voice.md); config only decodes, and
// package controlplane checks the values.
type Voice struct {
	Mode               string         `yaml:"mode"`
	Model              string         `yaml:"model"`
	Voice              string         `yaml:"voice"`
	Voices             []string       `yaml:"voices"`
	Instructions       string         `yaml:"instructions"`
	TranscriptionModel *string        `yaml:"transcription_model"` // "" turns transcription off
	ContextTool        *string        `yaml:"context_tool"`        // "" means no profile context
	SecretTTL          time.Duration  `yaml:"secret_ttl"`
	ToolCallsPerMinute int            `yaml:"tool_calls_per_minute"`
	SweepInterval      time.Duration  `yaml:"sweep_interval"`
	IdleTimeout        time.Duration  `yaml:"idle_timeout"`     // sideband: end a call whose socket is silent this long
	VADIdleTimeout     *time.Duration `yaml:"vad_idle_timeout"` // sideband: server VAD's idle timeout; 0 turns it off
	// UsageCeilings overrides the per-second bounds on a direct-mode app's
	// reported usage, by class (text_in, transcription.audio_ms, …).
	UsageCeilings map[string]int64 `yaml:"usage_ceilings"`
}

// Prices is the price table override (DESIGN §10): when set, it replaces
// the embedded prices.yaml whole, in the same shape. Package billing reads
// and checks it; config keeps it as the YAML it was given.
type Prices struct {
	node *yaml.Node
}

// UnmarshalYAML keeps the section as it is written.
func (p *Prices) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: prices must be a mapping with version and models", n.Line)
	}
	p.node = n
	return nil
}

// YAML is the override as a document, or nil when the file sets none.
func (p Prices) YAML() ([]byte, error) {
	if p.node == nil {
		return nil, nil
	}
	return yaml.Marshal(p.node)
}
