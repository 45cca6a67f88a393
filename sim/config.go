package sim

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/pion/webrtc/v4"
	"github.com/voxgate/voxgate/sim/core"
	"github.com/voxgate/voxgate/sim/live"
	"github.com/voxgate/voxgate/sim/openai"
	"github.com/voxgate/voxgate/sim/realtime"
	"go.yaml.in/yaml/v3"
)

// Config configures a simulator. The zero value is usable: any non-empty key,
// any model, fast default latency and the default script.
type Config struct {
	// Keys restricts the accepted API keys. Empty means any non-empty key.
	Keys []string `yaml:"keys" json:"keys,omitempty"`
	// Models restricts the accepted models; others get 404 model_not_found.
	// Empty means any model name is accepted and echoed back. GET /v1/models
	// lists these, or, when empty, the models the simulator knows by name.
	Models []string `yaml:"models" json:"models,omitempty"`
	// ShutdownDates maps a model (a family covers its dated snapshots) to
	// the YYYY-MM-DD day it shuts down: GET /v1/models reports it, and from
	// that day (by Now) every endpoint answers the model 404
	// model_not_found. Nil means DefaultShutdownDates(); an empty map means
	// no model ever shuts down.
	ShutdownDates map[string]string `yaml:"shutdown_dates" json:"shutdown_dates,omitempty"`
	// Latency shapes response timing. Nil means DefaultLatency; a non-nil
	// zero value means no delay at all (benchmarks and most tests).
	Latency *Latency `yaml:"latency" json:"latency,omitempty"`
	// Script decides replies. Rules are tried in order; when none applies the
	// built-in default behaviour answers.
	Script openai.Script `yaml:"script" json:"script"`
	// Chat configures Chat Completions: model snapshots, rate-limit headers,
	// prompt caching.
	Chat openai.Chat `yaml:"chat" json:"chat"`
	// Realtime configures the Realtime endpoints (voice turns, audio).
	Realtime realtime.Config `yaml:"realtime" json:"realtime"`
	// Live configures GPT-Live (/v1/live/sessions): turns, delegations and
	// the session clock.
	Live live.Config `yaml:"live" json:"live"`
	// WebRTC, when set, replaces the ICE settings of the simulator's peers.
	// Nil means LoopbackSettingEngine: the simulator is a test tool.
	WebRTC *webrtc.SettingEngine `yaml:"-" json:"-"`
	// Faults are installed at start, as if POSTed to /sim/faults.
	Faults []core.Fault `yaml:"faults" json:"faults,omitempty"`
	// MaxBodyBytes caps request bodies (413 beyond). Zero means 8 MiB.
	MaxBodyBytes int64 `yaml:"max_body_bytes" json:"max_body_bytes,omitempty"`
	// Seed makes fractional faults reproducible. Zero picks a random seed.
	Seed uint64 `yaml:"seed" json:"seed,omitempty"`
	// Now is the clock client secrets expire by, chat rate-limit usage and
	// cached prompts age by, and shutdown dates are reached by; nil means
	// time.Now. Tests set it to expire a secret or a cached prompt without
	// waiting out its TTL, or to stand on a day past a model's shutdown.
	Now func() time.Time `yaml:"-" json:"-"`
	// Logger receives unexpected errors. Nil discards them.
	Logger *slog.Logger `yaml:"-" json:"-"`
}

// Latency describes how fast the simulated model answers (core.Latency).
type Latency = core.Latency

// DefaultLatency is used when Config.Latency is nil: quick enough for
// interactive use, slow enough that streaming is visible.
func DefaultLatency() Latency { return core.DefaultLatency() }

// defaultMaxBodyBytes matches the order of magnitude of the real API's limit
// for chat requests without images.
const defaultMaxBodyBytes = 8 << 20

// LoadConfig reads a YAML (or JSON) config file. Unknown keys are errors, so
// a typo never silently falls back to a default.
func LoadConfig(path string) (Config, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("sim: load config: %w", err)
	}
	cfg, err := parseConfig(raw)
	if err != nil {
		return Config{}, fmt.Errorf("sim: config %s: %w", path, err)
	}
	return cfg, nil
}

func parseConfig(raw []byte) (Config, error) {
	var cfg Config
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	if err := dec.Decode(&cfg); err != nil && !errors.Is(err, io.EOF) {
		return Config{}, err
	}
	if err := cfg.validate(); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

// validate checks what can be checked without building the server.
func (c *Config) validate() error {
	if c.MaxBodyBytes < 0 {
		return fmt.Errorf("max_body_bytes: must not be negative, got %d", c.MaxBodyBytes)
	}
	if l := c.Latency; l != nil {
		if l.TTFT < 0 || l.TokensPerSecond < 0 || l.ChunkTokens < 0 {
			return fmt.Errorf("latency: values must not be negative")
		}
		for m, d := range l.ModelTTFT {
			if m == "" || d < 0 {
				return fmt.Errorf("latency: model_ttft: %q: %s", m, d)
			}
		}
	}
	for i, k := range c.Keys {
		if k == "" {
			return fmt.Errorf("keys[%d]: empty key", i)
		}
	}
	if err := openai.ValidateShutdownDates(c.ShutdownDates); err != nil {
		return err
	}
	if err := c.Chat.Validate(); err != nil {
		return fmt.Errorf("chat: %w", err)
	}
	if err := c.Realtime.Validate(); err != nil {
		return fmt.Errorf("realtime: %w", err)
	}
	if err := c.Live.Validate(); err != nil {
		return fmt.Errorf("live: %w", err)
	}
	for i := range c.Faults {
		if err := c.Faults[i].Validate(); err != nil {
			return fmt.Errorf("faults[%d]: %w", i, err)
		}
	}
	if _, err := openai.CompileScript(c.Script); err != nil {
		return fmt.Errorf("script: %w", err)
	}
	return nil
}

// latency returns the effective latency with defaults applied.
func (c *Config) latency() Latency {
	if c.Latency == nil {
		return core.DefaultLatency()
	}
	l := *c.Latency
	if l.ChunkTokens == 0 {
		l.ChunkTokens = 1
	}
	return l
}
