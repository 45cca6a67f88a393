package anthropic

import (
	"encoding/base64"
	"fmt"
	"regexp"
	"strings"
)

// Sonnet 5.5 always thinks (models.md, "Read again 2026-11-28"): the text
// it writes between tool calls comes back inside a thinking block, not a
// text block, and a thinking block is bound to the model that wrote it,
// so replaying one into another model is refused. The simulator does both
// for the models that always think (alwaysThinks), so a gateway that
// drops such text, or replays another model's blocks after a failover,
// fails a test.

// alwaysThinks reports a model that always thinks: the ones that refuse a
// forced tool choice and thinking disabled (anthropic.go).
func alwaysThinks(model string) bool { return refusesForcedToolUse(model) }

// thoughtBeforeTools reports an answer whose text, written before its
// tool calls, comes back as a thinking block.
func (a *anthAnswer) thoughtBeforeTools() bool {
	return alwaysThinks(a.model) && a.text != "" && len(a.calls) > 0
}

// anthThinkingBlock is a thinking content block as the API sends it.
type anthThinkingBlock struct {
	Type      string `json:"type"`
	Thinking  string `json:"thinking"`
	Signature string `json:"signature"`
}

type anthThinkingDelta struct {
	Type     string `json:"type"`
	Thinking string `json:"thinking"`
}

type anthSignatureDelta struct {
	Type      string `json:"type"`
	Signature string `json:"signature"`
}

// snapshotSuffix is a dated snapshot's tail: a block written by
// claude-sonnet-5-5-20261001 is the family's, and claude-sonnet-5-5
// takes it back.
var snapshotSuffix = regexp.MustCompile(`-\d{8}$`)

// thinkingSignature is the signature of a block model wrote. The real
// one is opaque; the simulator's names the model family, so it can tell
// a block replayed into another model.
func thinkingSignature(model string) string {
	return "simsig_" + base64.RawURLEncoding.EncodeToString([]byte(snapshotSuffix.ReplaceAllString(model, "")))
}

// checkThinking refuses a thinking block replayed into a model other than
// the one that wrote it, in the API's words for a signature it cannot
// verify.
func checkThinking(model string, b *anthContentBlock, where string) error {
	if b.Thinking == nil {
		return anthInvalid(where + ".thinking: Field required")
	}
	if b.Signature == "" {
		return anthInvalid(where + ".signature: Field required")
	}
	if !strings.EqualFold(b.Signature, thinkingSignature(model)) {
		return anthInvalid(fmt.Sprintf("%s: Invalid `signature` in `thinking` block", where))
	}
	return nil
}
