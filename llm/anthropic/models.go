package anthropic

import (
	"strconv"
	"strings"

	"github.com/voxgate/voxgate/internal/modelname"
)

// forcedToolChoiceRefusers are Anthropic models that answer a forced tool
// choice (tool_choice any or tool) with a 400 (models.md: Sonnet 5.5).
var forcedToolChoiceRefusers = map[string]bool{"claude-sonnet-5-5": true}

// refusesForcedToolChoice reports an Anthropic model, or a dated snapshot
// of one, that refuses a forced tool choice: the adapter sends it auto.
func refusesForcedToolChoice(model string) bool {
	refuses, _ := modelname.Lookup(forcedToolChoiceRefusers, model)
	return refuses
}

// takesOutputFormat reports a model with structured outputs
// (output_config.format): Claude 4.5 and later, by the version in its
// name (the docs list Haiku 4.5, Sonnet 4.5, Opus 4.5 and the 4.6 models;
// earlier ones refuse the parameter). A name without a Claude version
// (another server's model) is taken to have them: it answers for itself.
func takesOutputFormat(model string) bool {
	major, minor, ok := claudeVersion(model)
	return !ok || major > 4 || major == 4 && minor >= 5
}

// claudeVersion reads the version in a Claude model's name: its first
// one- or two-digit number is the major, the next (if any) the minor; a
// dated snapshot's eight digits are no part of it.
func claudeVersion(model string) (major, minor int, ok bool) {
	rest, found := strings.CutPrefix(model, "claude-")
	if !found {
		return 0, 0, false
	}
	var nums []int
	for _, part := range strings.Split(rest, "-") {
		if n, err := strconv.Atoi(part); err == nil && len(part) <= 2 {
			nums = append(nums, n)
		}
	}
	switch len(nums) {
	case 0:
		return 0, 0, false
	case 1:
		return nums[0], 0, true
	}
	return nums[0], nums[1], true
}
