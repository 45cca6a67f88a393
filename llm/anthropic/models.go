package anthropic

import "regexp"

// forcedToolChoiceRefusers are Anthropic models that answer a forced tool
// choice (tool_choice any or tool) with a 400 (models.md: Sonnet 5.5).
var forcedToolChoiceRefusers = map[string]bool{"claude-sonnet-5-5": true}

// anthropicSnapshotRE matches an Anthropic dated snapshot
// (claude-sonnet-4-5-20250929) and captures its family.
var anthropicSnapshotRE = regexp.MustCompile(`^(.+)-\d{8}$`)

// refusesForcedToolChoice reports an Anthropic model, or a dated snapshot
// of one, that refuses a forced tool choice: the adapter sends it auto.
func refusesForcedToolChoice(model string) bool {
	if sub := anthropicSnapshotRE.FindStringSubmatch(model); sub != nil {
		model = sub[1]
	}
	return forcedToolChoiceRefusers[model]
}
