package sse

import (
	"context"
	"encoding/json"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/tools"
)

// toolSpecs are the tools plan may use, as the model sees them.
func (s *Service) toolSpecs(plan string) []llm.ToolSpec {
	ts := s.tools.Registry().ForPlan(plan, false)
	out := make([]llm.ToolSpec, 0, len(ts))
	for _, t := range ts {
		out = append(out, llm.ToolSpec{Name: t.Name, Description: t.Description, Parameters: t.Parameters})
	}
	return out
}

// runTools answers one model response's tool calls, in order. A call to a
// standard or elevated tool is validated, stored for confirmation and ends
// the turn (stop); the calls after it are not run.
func (t *turn) runTools(ctx context.Context, text string, calls []llm.ToolCall) (stop bool, err error) {
	keyed := make([]llm.ToolCall, len(calls))
	for i, c := range calls {
		keyed[i] = llm.ToolCall{ID: t.callID(), Name: c.Name, Arguments: c.Arguments}
	}
	t.msgs = append(t.msgs, llm.Message{Role: llm.RoleAssistant, Content: text, ToolCalls: keyed})
	if err := t.status("searching", labelSearching, "start"); err != nil {
		return false, err
	}
	for _, c := range keyed {
		tool, ok := t.s.tools.Registry().Lookup(c.Name)
		if ok && tool.Tier != tools.TierNone {
			stored, err := t.askConfirmation(ctx, tool, c)
			if err != nil {
				return false, err
			}
			if stored {
				return true, t.status("searching", labelSearching, "complete")
			}
			continue
		}
		if err := t.execute(ctx, c, false); err != nil {
			return false, err
		}
	}
	return false, t.status("searching", labelSearching, "complete")
}

// execute runs one call through the shared executor and reports it.
func (t *turn) execute(ctx context.Context, c llm.ToolCall, confirmed bool) error {
	if err := t.out.send("tool", toolEvent(c, "started")); err != nil {
		return err
	}
	res, err := t.s.tools.Execute(ctx, tools.Call{
		SessionID: t.sessionID, SessionKind: tools.KindChat, Source: "chat", CallID: c.ID,
		Name: c.Name, Arguments: []byte(c.Arguments), Principal: t.p, Confirmed: confirmed, Plan: t.ticket.Plan,
	})
	if err != nil {
		if ctx.Err() != nil {
			return ctxError(ctx, err)
		}
		switch apierr.CodeOf(err) {
		case apierr.Internal, apierr.Unavailable:
			return err
		}
		// A refusal (unknown tool, not allowed, bad arguments) is the
		// model's mistake: it reads why and may try again.
		t.answerTool(c, tools.Refusal(err).Output(), "refused")
		return t.out.send("tool", toolEvent(c, "failed"))
	}
	state := "finished"
	if res.Error != nil {
		state = "failed"
	}
	t.answerTool(c, res.Output, state)
	partials := t.answer.addCards(res.Cards, res.Partials)
	t.answer.DBWrites = append(t.answer.DBWrites, res.DBWrites...)
	t.answer.SafetyFlags = append(t.answer.SafetyFlags, res.SafetyFlags...)
	if err := t.out.send("tool", toolEvent(c, state)); err != nil {
		return err
	}
	for _, p := range partials {
		if err := t.out.send("partial", map[string]any{"kind": p.Kind, "data": p.Data}); err != nil {
			return err
		}
	}
	return nil
}

// answerTool gives the model a call's output and records the call. The
// record keeps the arguments for the history, except a tool's whose
// arguments the app must never see (an open SQL tool's statement).
func (t *turn) answerTool(c llm.ToolCall, output, state string) {
	t.msgs = append(t.msgs, llm.Message{Role: llm.RoleTool, ToolCallID: c.ID, Content: output})
	t.answer.ToolCalls = append(t.answer.ToolCalls, ToolCall{CallID: c.ID, Name: c.Name, State: state,
		Arguments: t.shownArgs(c.Name, rawArgs(c.Arguments))})
}

// shownArgs is what the app may see of a call's arguments: nothing for a
// tool marked PrivateArguments, or for a name that is no tool at all.
func (t *turn) shownArgs(name string, args json.RawMessage) json.RawMessage {
	if tool, ok := t.s.tools.Registry().Lookup(name); !ok || tool.PrivateArguments {
		return nil
	}
	return args
}

// askConfirmation validates a call that needs the user's confirmation and
// stores it. Arguments that fail validation go back to the model like any
// refused call (stored is false): a call that could never run is never
// offered to the user.
func (t *turn) askConfirmation(ctx context.Context, tool *tools.Tool, c llm.ToolCall) (stored bool, err error) {
	_, args, err := t.s.tools.Check(ctx, tools.Call{SessionID: t.sessionID, SessionKind: tools.KindChat, Source: "chat",
		CallID: c.ID, Name: c.Name, Arguments: []byte(c.Arguments), Principal: t.p, Plan: t.ticket.Plan})
	if err != nil {
		switch apierr.CodeOf(err) {
		case apierr.Internal, apierr.Unavailable:
			return false, err
		}
		t.answerTool(c, tools.Refusal(err).Output(), "refused")
		return false, t.out.send("tool", toolEvent(c, "failed"))
	}
	err = t.s.storePending(ctx, t.p.UserID, pending{CallID: c.ID, SessionID: t.sessionID, TurnID: t.turnID,
		Tool: tool.Name, Arguments: args, AssistantText: t.msgs[len(t.msgs)-1].Content}, t.fresh)
	if err != nil {
		return false, err
	}
	t.fresh = false
	t.pending = true
	shown := t.shownArgs(c.Name, args)
	t.answer.ToolCalls = append(t.answer.ToolCalls, ToolCall{CallID: c.ID, Name: c.Name, State: "pending", Arguments: shown})
	payload := map[string]any{"call_id": c.ID, "name": tool.Name, "tier": string(tool.Tier)}
	if shown != nil {
		payload["arguments"] = shown
	}
	t.answer.Actions = append(t.answer.Actions, Action{Type: "confirm", Label: tool.Description, Payload: payload})
	return true, t.out.send("confirmation_required", map[string]string{
		"call_id": c.ID, "name": tool.Name, "description": tool.Description, "tier": string(tool.Tier)})
}

// answerConfirmation continues a turn from a stored call: allowed, it runs
// (confirmed); denied, the model hears so.
func (t *turn) answerConfirmation(ctx context.Context) error {
	p := t.confirm
	c := llm.ToolCall{ID: p.CallID, Name: p.Tool, Arguments: string(p.Arguments)}
	t.msgs = append(t.msgs, llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{c}})
	if !*t.req.Confirm.Allow {
		t.answerTool(c, tools.Failf("denied", "The user chose not to do this.").Output(), "denied")
		return nil
	}
	return t.execute(ctx, c, true)
}

func toolEvent(c llm.ToolCall, state string) map[string]string {
	return map[string]string{"call_id": c.ID, "name": c.Name, "state": state}
}

// rawArgs keeps a call's arguments as JSON when they are JSON, and as a
// JSON string otherwise (a model can write anything).
func rawArgs(s string) json.RawMessage {
	if json.Valid([]byte(s)) {
		return json.RawMessage(s)
	}
	b, _ := json.Marshal(s)
	return b
}

// MaxCards is how many cards a final response holds (response.schema.json
// says the same): a turn keeps its calls' first MaxCards cards and counts
// the rest in CardsOmitted, so a search that finds more never fails a
// turn that has already run its tools and streamed its answer.
const MaxCards = 50

// addCards adds a call's cards and partials to the answer's cards, a
// partial that is also a card only once, up to MaxCards. It returns the
// partials to send as events: those the answer holds.
func (d *messageData) addCards(cards, partials []tools.Card) (shown []tools.Card) {
	add := func(c tools.Card) bool {
		for _, have := range d.Cards {
			if have.Kind == c.Kind && string(have.Data) == string(c.Data) {
				return true
			}
		}
		if len(d.Cards) >= MaxCards {
			key := c.Kind + "\x00" + string(c.Data)
			if _, seen := d.omitted[key]; !seen {
				if d.omitted == nil {
					d.omitted = make(map[string]struct{})
				}
				d.omitted[key] = struct{}{}
				d.CardsOmitted++
			}
			return false
		}
		d.Cards = append(d.Cards, c)
		return true
	}
	for _, c := range cards {
		add(c)
	}
	for _, p := range partials {
		if add(p) {
			shown = append(shown, p)
		}
	}
	return shown
}
