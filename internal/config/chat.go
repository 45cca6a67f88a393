package config

import "time"

// Chat is the chat section (DESIGN §7). Every field left out keeps the
// chat service's default (docs/chat.md); config only decodes, and package
// sse checks the values. The user-profile context tool is voice's
// voice.context_tool: voice and chat use the same one (DESIGN §7).
type Chat struct {
	Model           string        `yaml:"model"`
	Instructions    string        `yaml:"instructions"`
	MaxOutputTokens int           `yaml:"max_output_tokens"`
	EstimateTokens  int64         `yaml:"estimate_tokens"`
	TurnTimeout     time.Duration `yaml:"turn_timeout"`
	// ReasoningEffort is sent with every model call; "" sends none (a
	// model that takes tools only at "none" gets "none").
	ReasoningEffort string `yaml:"reasoning_effort"`
	// ChunkTimeout is the wait for a model's first chunk (unless
	// FirstChunkTimeouts names the model) and for each chunk after it.
	ChunkTimeout time.Duration `yaml:"chunk_timeout"`
	// FirstChunkTimeouts are the waits for the first chunk of the models
	// named, over the defaults for reasoning models (docs/chat.md).
	FirstChunkTimeouts map[string]time.Duration `yaml:"first_chunk_timeouts"`
	// RetentionDays deletes conversations idle this long; nil keeps the
	// default, 0 keeps them forever.
	RetentionDays *int          `yaml:"retention_days"`
	PurgeInterval time.Duration `yaml:"purge_interval"`
}
