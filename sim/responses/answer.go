package responses

import (
	"encoding/json"
	"time"

	"github.com/voxgate/voxgate/sim/core"
	"github.com/voxgate/voxgate/sim/openai"
)

// effortTokens is how many reasoning tokens a reasoning model spends at
// each effort before it answers; a request without an effort gets the
// API's default, medium. The real counts vary by prompt; fixed counts let
// a test predict usage and a max_output_tokens that runs out inside the
// reasoning.
var effortTokens = map[string]int{"none": 0, "minimal": 16, "low": 64, "medium": 192, "high": 512, "xhigh": 1024, "max": 2048}

// answer is one response made concrete: the engine's completion, the
// reasoning spent before it, and the output items in order.
type answer struct {
	c         *openai.Completion
	reasoning int     // reasoning tokens, 0 for a model that does not reason
	effort    *string // as reported in response.reasoning
	status    string  // completed or incomplete
	reason    string  // incomplete_details.reason
	out       []item  // output items: reasoning, message, function calls
	usage     usage
}

// newAnswer renders the scripted reply to chat as a Responses answer:
// reasoning first (for a reasoning model at an effort above none), then
// the message, then each call; max_output_tokens covers reasoning and
// visible output together, as on the real API.
func newAnswer(r *createRequest, chat *openai.ChatRequest, plan openai.Answer, model string, prompt openai.PromptTokens, reasons bool) *answer {
	a := &answer{status: "completed"}
	if reasons {
		e := r.effort()
		if e == "" {
			e = "medium"
		}
		a.effort, a.reasoning = &e, effortTokens[e]
	}
	visible := 0
	if m := r.MaxOutputTokens; m != nil {
		a.reasoning = min(a.reasoning, *m)
		visible = *m - a.reasoning
		limit := max(visible, 1)
		chat.MaxCompletionTokens = &limit
	}
	if f := r.format(); f != nil && len(plan.Calls) == 0 {
		switch f.Type {
		case "json_schema":
			plan.Text = openai.SchemaJSON(f.Schema)
		case "json_object":
			plan.Text = string(mustJSON(map[string]string{"answer": plan.Text}))
		}
	}
	a.c = openai.NewCompletion(chat, plan, model, prompt)
	if r.MaxOutputTokens != nil && visible == 0 {
		// The budget ran out inside the reasoning: nothing visible.
		a.c.Text, a.c.Calls, a.c.Finish = "", nil, "length"
		a.c.Usage.TotalTokens -= a.c.Usage.CompletionTokens
		a.c.Usage.CompletionTokens = 0
	}
	if a.c.Finish == "length" {
		a.status, a.reason = "incomplete", "max_output_tokens"
	}
	if a.reasoning > 0 {
		a.out = append(a.out, item{ID: "rs_" + core.RandomID(), Type: "reasoning"})
	}
	if a.c.Text != "" || len(a.c.Calls) == 0 && a.c.Finish != "length" {
		a.out = append(a.out, item{ID: "msg_" + core.RandomID(), Type: "message", Role: "assistant", Text: a.c.Text})
	}
	for _, tc := range a.c.Calls {
		a.out = append(a.out, item{ID: "fc_" + core.RandomID(), Type: "function_call", CallID: tc.ID, Name: tc.Name, Arguments: tc.Arguments})
	}
	u := a.c.Usage
	a.usage = usage{InputTokens: u.PromptTokens, InputTokensDetails: inputDetails{CachedTokens: u.PromptTokensDetails.CachedTokens},
		OutputTokens: u.CompletionTokens + a.reasoning, OutputTokensDetails: outputDetails{ReasoningTokens: a.reasoning}}
	if w := u.PromptTokensDetails.CacheWriteTokens; w != nil {
		a.usage.InputTokensDetails.CacheWriteTokens = *w
	}
	a.usage.TotalTokens = a.usage.InputTokens + a.usage.OutputTokens
	return a
}

// itemStatus is the status an output item of a finished answer has.
func (a *answer) itemStatus() string {
	if a.status == "incomplete" {
		return "incomplete"
	}
	return "completed"
}

// shell is the Response object before any output: what response.created
// carries, and what the finished response fills in.
func shell(r *createRequest, id, model string, effort *string, now time.Time) *response {
	resp := &response{ID: id, Object: "response", CreatedAt: now.Unix(), Status: "in_progress",
		Instructions: r.Instructions, MaxOutputTokens: r.MaxOutputTokens, Model: model, Output: []json.RawMessage{},
		ParallelToolCalls: r.ParallelToolCalls == nil || *r.ParallelToolCalls, PreviousResponseID: r.PreviousResponseID,
		Reasoning: reasoningOut{Effort: effort}, ServiceTier: "default", Store: r.store(), Temperature: 1, TopP: 1,
		Text: textOut{Format: textFormat{Type: "text"}}, ToolChoice: toolChoiceOut(r.choice), Tools: []toolOut{},
		Truncation: "disabled", User: r.User, SafetyIdentifier: r.SafetyIdentifier, PromptCacheKey: r.PromptCacheKey,
		Metadata: r.Metadata}
	if r.Reasoning != nil {
		resp.Reasoning.Summary = r.Reasoning.Summary
	}
	if r.Temperature != nil {
		resp.Temperature = *r.Temperature
	}
	if r.TopP != nil {
		resp.TopP = *r.TopP
	}
	if f := r.format(); f != nil {
		resp.Text.Format = *f
	}
	if resp.Metadata == nil {
		resp.Metadata = map[string]string{}
	}
	for _, t := range r.Tools {
		resp.Tools = append(resp.Tools, toolOut{Type: "function", Name: t.Name, Description: t.Description,
			Parameters: t.Parameters, Strict: t.Strict == nil || *t.Strict})
	}
	return resp
}

// finish fills the response in from its answer.
func (a *answer) finish(resp *response, now time.Time) {
	resp.Status = a.status
	if a.status == "completed" {
		t := now.Unix()
		resp.CompletedAt = &t
	} else {
		resp.IncompleteDetails = &incomplete{Reason: a.reason}
	}
	resp.Output = resp.Output[:0]
	for _, it := range a.out {
		resp.Output = append(resp.Output, it.render(a.itemStatus()))
	}
	u := a.usage
	resp.Usage = &u
}

func toolChoiceOut(c openai.ToolChoice) any {
	if c.Mode == "function" {
		return map[string]string{"type": "function", "name": c.Name}
	}
	return c.Mode
}
