package chat

import (
	"context"

	"github.com/voxgate/voxgate/agent"
	"github.com/voxgate/voxgate/billing"
	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/tools"
	"github.com/voxgate/voxgate/unit"
)

// model runs the agent loop: the model with the tools the plan may use,
// the first call forced to the workflow's tool when one is named, the
// tools through the turn's Call (tools.go), the text and progress out as
// events (progress.go). What the calls used is the turn's, even when the
// loop fails. Every call goes through the router on chat.route; each
// routed call's trace is kept (the audit row, the attempts a provider
// billed), and the record names the target that answered last. When every
// target failed before answering, the turn answers in degraded mode.
func (t *turn) model(ctx context.Context) error {
	// The one place a turn picks its provider and names its model.
	provider := t.traces.Keep(t.s.env.Provider)
	req := llm.Request{Model: t.s.cfg.Route, Messages: t.msgs, Tools: tools.Specs(t.s.tools.Registry().ForPlan(t.ticket.Plan, false)),
		MaxOutputTokens: t.s.cfg.MaxOutputTokens, ReasoningEffort: t.s.cfg.ReasoningEffort,
		SafetyIdentifier: t.s.env.SafetyIDs.For(t.p.UserID)}
	if t.req.Workflow != "" && t.confirm == nil {
		req.ToolChoice = t.req.Workflow
	}
	res, err := agent.Run(ctx, provider, req, t)
	u := res.Usage
	t.modelName, t.calls, t.estimated = u.Model, u.Calls, u.Estimated
	t.usage = billing.FromCalls(u.Each)
	t.pending = res.Stopped
	if a, ok := t.traces.Answered(); ok {
		t.provider, t.answerModel = a.Provider, a.Model
	}
	switch {
	case err == nil:
		return nil
	case ctx.Err() == nil && unit.DegradedBy(err):
		return t.degrade(ctx)
	}
	return loopError(ctx, err)
}

// degrade ends a turn whose route failed everywhere with the configured
// fallback (DESIGN §11): the thinking phase closed, what the output filter
// held of an earlier call's text, then its message as one content event
// (the answer is every content delta), its suggestions, degraded: true.
// The turn then ends as any answer does.
func (t *turn) degrade(ctx context.Context) error {
	d := t.s.cfg.Degraded
	t.degraded = true
	t.answer.Suggestions = append(t.answer.Suggestions, degradedSuggestions(d)...)
	// The failed call's thinking phase began and never ended.
	if err := t.Progress(ctx, agent.Thinking, true); err != nil {
		return err
	}
	if err := t.closeScreen(); err != nil {
		return err
	}
	return t.say(d.Message)
}

// degradedSuggestions are degraded mode's suggestions as the response
// carries them, every configured field kept.
func degradedSuggestions(d config.Degraded) []Suggestion {
	out := make([]Suggestion, 0, len(d.Suggestions))
	for _, sg := range d.Suggestions {
		out = append(out, Suggestion{Label: sg.Label, Message: sg.Message, Category: sg.Category})
	}
	return out
}
