package llm

import (
	"time"

	"github.com/voxgate/voxgate/internal/modelname"
)

// What the chat path must know of particular models to call them well
// (../shared/reference/models.md has the sources). A family's entry covers
// its dated snapshots.

// reasoningModels think before their first chunk.
var reasoningModels = []string{
	"o1", "o3", "o3-mini", "o4-mini",
	"gpt-5", "gpt-5-mini", "gpt-5-nano", "gpt-5.1", "gpt-5.2", "gpt-5.4", "gpt-5.4-mini", "gpt-5.4-nano", "gpt-5.5",
	"gpt-6-luna", "gpt-6.1-terra", "gpt-6.2-sol",
}

// DefaultFirstChunkTimeouts gives every known reasoning model
// DefaultReasoningFirstChunk; other models wait the provider's Timeout.
func DefaultFirstChunkTimeouts() map[string]time.Duration {
	out := make(map[string]time.Duration, len(reasoningModels))
	for _, m := range reasoningModels {
		out[m] = DefaultReasoningFirstChunk
	}
	return out
}

// toolsNeedNoReasoning are models whose Chat Completions take function
// tools only with reasoning_effort "none" (gpt-6-luna's model page).
var toolsNeedNoReasoning = map[string]bool{"gpt-6-luna": true}

// ToolsNeedNoReasoning reports a model that takes function tools over Chat
// Completions only with reasoning_effort "none": a request with tools and
// no effort of its own is sent with "none", and any other effort with
// tools is a configuration the provider refuses.
func ToolsNeedNoReasoning(model string) bool {
	need, _ := modelname.Lookup(toolsNeedNoReasoning, model)
	return need
}
