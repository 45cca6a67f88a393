package openai

import (
	"encoding/json"
	"time"

	"github.com/voxgate/voxgate/sim/core"
)

// ToolCall is one call the simulated model makes.
type ToolCall struct {
	ID        string
	Name      string
	Arguments string
}

// Answer is what the script decided, before limits are applied.
type Answer struct {
	Text  string
	Calls []ToolCall
}

// Completion is a reply made concrete: ids assigned, max tokens applied and
// usage counted. Streaming and non-streaming responses render the same one.
type Completion struct {
	id      string
	created int64
	Model   string
	Text    string
	Calls   []ToolCall
	Finish  string
	Usage   usageBody
	// ServiceTier is the tier the answer names; "" is "default".
	ServiceTier string
}

const fingerprint = "fp_voxgate_sim"

// PromptTokens is what the prompt counts: its bytes (see promptBytes) and
// the tokens the prompt cache reports as cached.
type PromptTokens struct {
	Bytes, Cached int
	Written       int  // newly written to the cache
	reportWrites  bool // the model bills cache writes, so it reports them
}

// NewCompletion renders rep as model's answer to req.
func NewCompletion(req *ChatRequest, rep Answer, model string, p PromptTokens) *Completion {
	c := &Completion{
		id:      "chatcmpl-" + core.RandomID(),
		created: time.Now().Unix(),
		Model:   model,
		Text:    rep.Text,
		Calls:   rep.Calls,
		Finish:  "stop",
	}
	if len(c.Calls) > 0 {
		c.Finish = "tool_calls"
	}
	if max := req.maxCompletion(); max > 0 && TokensFor(completionBytes(c.Text, c.Calls)) > max {
		c.truncate(max * 4)
		c.Finish = "length"
	}
	for i := range c.Calls {
		c.Calls[i].ID = "call_" + core.RandomID()
	}
	prompt := TokensFor(p.Bytes)
	out := TokensFor(completionBytes(c.Text, c.Calls))
	c.Usage = usageBody{PromptTokens: prompt, CompletionTokens: out, TotalTokens: prompt + out,
		PromptTokensDetails: promptTokenDetails{CachedTokens: min(p.Cached, prompt)}}
	if p.reportWrites {
		written := min(p.Written, prompt-c.Usage.PromptTokensDetails.CachedTokens)
		c.Usage.PromptTokensDetails.CacheWriteTokens = &written
	}
	return c
}

// truncate cuts the reply to budget bytes as a model hitting its token limit
// would: text first, then each call; a call whose name does not fit is
// dropped, and the last one kept may have cut (invalid) arguments.
func (c *Completion) truncate(budget int) {
	c.Text = TruncateUTF8(c.Text, budget)
	budget -= len(c.Text)
	var kept []ToolCall
	for _, tc := range c.Calls {
		if budget < len(tc.Name) || budget == 0 {
			break
		}
		budget -= len(tc.Name)
		tc.Arguments = TruncateUTF8(tc.Arguments, budget)
		budget -= len(tc.Arguments)
		kept = append(kept, tc)
	}
	c.Calls = kept
}

func (c *Completion) body() completionBody {
	msg := responseMessage{Role: "assistant", Annotations: []struct{}{}}
	if c.Text != "" || len(c.Calls) == 0 {
		msg.Content = &c.Text
	}
	for _, tc := range c.Calls {
		msg.ToolCalls = append(msg.ToolCalls, wireToolCall{ID: tc.ID, Type: "function",
			Function: wireFunction{Name: tc.Name, Arguments: tc.Arguments}})
	}
	return completionBody{
		ID: c.id, Object: "chat.completion", Created: c.created, Model: c.Model,
		Choices:     []completionChoice{{Index: 0, Message: msg, FinishReason: c.Finish}},
		Usage:       &c.Usage,
		ServiceTier: c.tier(), SystemFingerprint: fingerprint,
	}
}

func (c *Completion) tier() string {
	if c.ServiceTier == "" {
		return "default"
	}
	return c.ServiceTier
}

func (c *Completion) marshal() []byte {
	b, _ := json.Marshal(c.body()) // plain structs of strings and ints cannot fail
	return b
}
