package openai

import (
	"encoding/json"

	"github.com/voxgate/voxgate/llm"
)

// A reasoning model's reasoning items, carried across a tool loop. The
// Responses upstream is stateless (store: false), so the model keeps its
// reasoning from one call of a turn to the next only if the request
// carries the reasoning items back, with their encrypted_content, before
// the calls they preceded (docs/llm.md, "Responses upstream"). They ride
// on the seam's own opaque field for that, the first such call's
// Signature, as Gemini's thought signatures do: every caller that keeps
// a call in the history keeps them, and other adapters ignore a
// Signature another SignedBy made.

// signedByPrefix starts SignedBy for reasoning this adapter carries; the
// rest is its scope, the account (Params.Scope) and the model. The
// content is sealed for one organization: another provider's key would
// have it refused (400 invalid_encrypted_content), and it is one model's
// reasoning; so it goes back only to the scope that made it, and a
// failover elsewhere drops it (the model reasons anew).
const signedByPrefix = "openai-responses:"

// reasoningItem is one reasoning item as it goes back.
type reasoningItem struct {
	ID               string `json:"id"`
	EncryptedContent string `json:"encrypted_content"`
}

// sign puts items on tc for scope.
func sign(tc *llm.ToolCall, scope string, items []reasoningItem) {
	b, _ := json.Marshal(items) // strings only: cannot fail
	tc.Signature, tc.SignedBy = string(b), signedByPrefix+scope
}

// carriedReasoning is the reasoning tc carries for scope: none when
// another scope or adapter signed it, or its signature is not ours.
func carriedReasoning(tc llm.ToolCall, scope string) []reasoningItem {
	if tc.SignedBy != signedByPrefix+scope || tc.Signature == "" {
		return nil
	}
	var items []reasoningItem
	if json.Unmarshal([]byte(tc.Signature), &items) != nil {
		return nil
	}
	kept := items[:0]
	for _, it := range items {
		if it.ID != "" && it.EncryptedContent != "" {
			kept = append(kept, it)
		}
	}
	return kept
}
