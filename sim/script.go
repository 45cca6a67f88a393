package sim

import "github.com/voxgate/voxgate/sim/openai"

// Scripts decide what the simulated model says on every surface; they live
// in sim/openai beside the Chat Completions engine the other surfaces
// translate into (docs/sim.md, "Scripts"). These names keep them where
// configs and tests find them.
type (
	Script     = openai.Script
	Rule       = openai.Rule
	When       = openai.When
	Reply      = openai.Reply
	ScriptCall = openai.ScriptCall
)
