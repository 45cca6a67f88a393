package sse

import (
	"context"

	"github.com/voxgate/voxgate/agent"
	"github.com/voxgate/voxgate/billing"
	"github.com/voxgate/voxgate/llm"
)

// model runs the agent loop: the model with the tools the plan may use,
// the first call forced to the workflow's tool when one is named, the
// tools through the turn's Call (tools.go), the text and progress out as
// events (progress.go). What the calls used is the turn's, even when the
// loop fails.
func (t *turn) model(ctx context.Context) error {
	// The one place a turn picks its provider and names its model.
	provider := t.s.provider
	req := llm.Request{Model: t.s.cfg.Model, Messages: t.msgs, Tools: t.s.toolSpecs(t.ticket.Plan),
		MaxOutputTokens: t.s.cfg.MaxOutputTokens, ReasoningEffort: t.s.cfg.ReasoningEffort,
		SafetyIdentifier: t.s.safetyID.For(t.p.UserID)}
	if t.req.Workflow != "" && t.confirm == nil {
		req.ToolChoice = t.req.Workflow
	}
	t.provider = provider.Name()
	res, err := agent.Run(ctx, provider, req, t)
	u := res.Usage
	t.text, t.modelName, t.calls, t.estimated = res.Text, u.Model, u.Calls, u.Estimated
	t.usage = billing.Usage{TextIn: u.InputTokens, TextCachedIn: u.CachedInputTokens,
		TextCacheWriteIn: u.CacheWriteInputTokens, TextOut: u.OutputTokens}
	t.pending = res.Stopped
	if err != nil {
		return loopError(ctx, err)
	}
	return nil
}

// toolSpecs are the tools plan may use, as the model sees them.
func (s *Service) toolSpecs(plan string) []llm.ToolSpec {
	ts := s.tools.Registry().ForPlan(plan, false)
	out := make([]llm.ToolSpec, 0, len(ts))
	for _, t := range ts {
		out = append(out, llm.ToolSpec{Name: t.Name, Description: t.Description, Parameters: t.Parameters})
	}
	return out
}
