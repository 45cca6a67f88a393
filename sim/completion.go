package sim

import (
	"encoding/json"
	"time"

	"github.com/voxgate/voxgate/sim/core"
)

// toolCall is one call the simulated model makes.
type toolCall struct {
	ID        string
	Name      string
	Arguments string
}

// reply is what the script decided, before limits are applied.
type reply struct {
	text  string
	calls []toolCall
}

// completion is a reply made concrete: ids assigned, max tokens applied and
// usage counted. Streaming and non-streaming responses render the same one.
type completion struct {
	id      string
	created int64
	model   string
	text    string
	calls   []toolCall
	finish  string
	usage   usageBody
}

const fingerprint = "fp_voxgate_sim"

// promptTokens is what the prompt counts: its bytes (see promptBytes) and
// the tokens the prompt cache reports as cached.
type promptTokens struct {
	bytes, cached int
	written       int  // newly written to the cache
	reportWrites  bool // the model bills cache writes, so it reports them
}

// newCompletion renders rep as model's answer to req.
func newCompletion(req *chatRequest, rep reply, model string, p promptTokens) *completion {
	c := &completion{
		id:      "chatcmpl-" + core.RandomID(),
		created: time.Now().Unix(),
		model:   model,
		text:    rep.text,
		calls:   rep.calls,
		finish:  "stop",
	}
	if len(c.calls) > 0 {
		c.finish = "tool_calls"
	}
	if max := req.maxCompletion(); max > 0 && tokensFor(completionBytes(c.text, c.calls)) > max {
		c.truncate(max * 4)
		c.finish = "length"
	}
	for i := range c.calls {
		c.calls[i].ID = "call_" + core.RandomID()
	}
	prompt := tokensFor(p.bytes)
	out := tokensFor(completionBytes(c.text, c.calls))
	c.usage = usageBody{PromptTokens: prompt, CompletionTokens: out, TotalTokens: prompt + out,
		PromptTokensDetails: promptTokenDetails{CachedTokens: min(p.cached, prompt)}}
	if p.reportWrites {
		written := min(p.written, prompt-c.usage.PromptTokensDetails.CachedTokens)
		c.usage.PromptTokensDetails.CacheWriteTokens = &written
	}
	return c
}

// truncate cuts the reply to budget bytes as a model hitting its token limit
// would: text first, then each call; a call whose name does not fit is
// dropped, and the last one kept may have cut (invalid) arguments.
func (c *completion) truncate(budget int) {
	c.text = truncateUTF8(c.text, budget)
	budget -= len(c.text)
	var kept []toolCall
	for _, tc := range c.calls {
		if budget < len(tc.Name) || budget == 0 {
			break
		}
		budget -= len(tc.Name)
		tc.Arguments = truncateUTF8(tc.Arguments, budget)
		budget -= len(tc.Arguments)
		kept = append(kept, tc)
	}
	c.calls = kept
}

func (c *completion) body() completionBody {
	msg := responseMessage{Role: "assistant", Annotations: []struct{}{}}
	if c.text != "" || len(c.calls) == 0 {
		msg.Content = &c.text
	}
	for _, tc := range c.calls {
		msg.ToolCalls = append(msg.ToolCalls, wireToolCall{ID: tc.ID, Type: "function",
			Function: wireFunction{Name: tc.Name, Arguments: tc.Arguments}})
	}
	return completionBody{
		ID: c.id, Object: "chat.completion", Created: c.created, Model: c.model,
		Choices:     []completionChoice{{Index: 0, Message: msg, FinishReason: c.finish}},
		Usage:       &c.usage,
		ServiceTier: "default", SystemFingerprint: fingerprint,
	}
}

func (c *completion) marshal() []byte {
	b, _ := json.Marshal(c.body()) // plain structs of strings and ints cannot fail
	return b
}
