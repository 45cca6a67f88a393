package sim

import (
	"github.com/voxgate/voxgate/sim/anthropic"
	"github.com/voxgate/voxgate/sim/gemini"
	"github.com/voxgate/voxgate/sim/openai"
)

// Endpoint names in faults and stats, each defined by the package that
// serves it.
const (
	EndpointChatCompletions     = openai.EndpointChatCompletions
	EndpointModels              = openai.EndpointModels
	EndpointOrgUsageCompletions = openai.EndpointOrgUsageCompletions
	EndpointOrgCosts            = openai.EndpointOrgCosts
	EndpointAnthropicMessages   = anthropic.EndpointMessages
	EndpointGeminiGenerate      = gemini.EndpointGenerate
	EndpointGeminiStream        = gemini.EndpointStream
)
