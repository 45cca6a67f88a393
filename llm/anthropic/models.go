package anthropic

import "github.com/voxgate/voxgate/internal/modelname"

// forcedToolChoiceRefusers are Anthropic models that answer a forced tool
// choice (tool_choice any or tool) with a 400 (models.md: Sonnet 5.5).
var forcedToolChoiceRefusers = map[string]bool{"claude-sonnet-5-5": true}

// refusesForcedToolChoice reports an Anthropic model, or a dated snapshot
// of one, that refuses a forced tool choice: the adapter sends it auto.
func refusesForcedToolChoice(model string) bool {
	refuses, _ := modelname.Lookup(forcedToolChoiceRefusers, model)
	return refuses
}
