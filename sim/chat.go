package sim

import "github.com/voxgate/voxgate/sim/openai"

// Chat Completions, the models list and the organization usage live in
// sim/openai; these names keep their configuration and endpoints where
// configs and tests find them.
type (
	Chat        = openai.Chat
	RateLimits  = openai.RateLimits
	PromptCache = openai.PromptCache
)

// DefaultShutdownDates are the shutdown dates used when
// Config.ShutdownDates is nil.
func DefaultShutdownDates() map[string]string { return openai.DefaultShutdownDates() }

// DefaultModelAliases are the aliases used when Chat.ModelAliases is nil.
func DefaultModelAliases() map[string]string { return openai.DefaultModelAliases() }

// DefaultReasoningModels are the models used when Chat.ReasoningModels is
// nil.
func DefaultReasoningModels() []string { return openai.DefaultReasoningModels() }

// DefaultToolsNeedNoEffort are the models used when Chat.ToolsNeedNoEffort
// is nil.
func DefaultToolsNeedNoEffort() []string { return openai.DefaultToolsNeedNoEffort() }

// DefaultNoEffortRefused are the models used when Chat.NoEffortRefused is
// nil.
func DefaultNoEffortRefused() []string { return openai.DefaultNoEffortRefused() }

// DefaultCacheWriteModels are the models used when Chat.CacheWriteModels
// is nil.
func DefaultCacheWriteModels() []string { return openai.DefaultCacheWriteModels() }
