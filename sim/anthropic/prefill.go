package anthropic

import (
	"strconv"
	"strings"
)

// prefillRefused is the API's answer to a request ending with an assistant
// message on a model that no longer takes a prefill (Anthropic's "what's
// new in Claude 4.6": prefill removed from Opus 4.6 and the models after
// it; docs/sim.md).
const prefillRefused = "This model does not support assistant message prefill. The conversation must end with a user message."

// prefillEndsInSpace is the API's answer to a prefill that ends in white
// space, on every model that takes a prefill (the Messages API's
// invalid_request_error; the text is the API's, docs/sim.md).
const prefillEndsInSpace = "messages: final assistant content cannot end with trailing whitespace"

// refusesPrefill reports a model from Claude 4.6 on, by the version in its
// name: claude-opus-4-6, claude-sonnet-4-6, claude-haiku-5-5 refuse;
// claude-haiku-4-5, claude-sonnet-4-5-20250929, claude-3-5-sonnet-20241022
// continue. A name without a version (a test's own model) continues.
func refusesPrefill(model string) bool {
	major, minor, ok := claudeVersion(model)
	return ok && (major > 4 || major == 4 && minor >= 6)
}

// claudeVersion reads the version of a Claude model's name: its first one-
// or two-digit number is the major, the next (if any) the minor; a dated
// snapshot's eight digits are no part of it.
func claudeVersion(model string) (major, minor int, ok bool) {
	rest, found := strings.CutPrefix(model, "claude-")
	if !found {
		return 0, 0, false
	}
	var nums []int
	for _, part := range strings.Split(rest, "-") {
		n, err := strconv.Atoi(part)
		if err != nil || len(part) > 2 {
			continue
		}
		nums = append(nums, n)
	}
	switch len(nums) {
	case 0:
		return 0, 0, false
	case 1:
		return nums[0], 0, true
	}
	return nums[0], nums[1], true
}

// prefill reports a request that ends with an assistant message, and its
// text: the reply so far the model is asked to continue.
func (r *messagesRequest) prefill() (string, bool) {
	last := r.Messages[len(r.Messages)-1]
	if last.Role != "assistant" {
		return "", false
	}
	return blocksText(last.blocks), true
}
