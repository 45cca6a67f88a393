package chat

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/voxgate/voxgate/agent"
	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/tools"
	"github.com/voxgate/voxgate/unit"
)

// Call runs one of the model's tool calls for the agent loop. A call to a
// standard or elevated tool is validated, stored for the user's
// confirmation and stops the loop; any other runs through the shared
// executor. Either way the call is kept with the answer.
func (t *turn) Call(ctx context.Context, c llm.ToolCall, said string) (agent.Outcome, error) {
	// Keyed by turn for the executor's (session, call_id): the model's id
	// keys the call only in the conversation the model sees.
	t.nextCall++
	c.ID = t.turnID + "." + strconv.Itoa(t.nextCall)
	if tool, ok := t.s.tools.Registry().Lookup(c.Name); ok && tool.Tier != tools.TierNone {
		return t.askConfirmation(ctx, tool, c, said)
	}
	out, err := t.execute(ctx, c, false)
	return agent.Outcome{Output: out}, err
}

// confirmed continues a turn from the stored call a confirmation answers:
// allowed, it runs (confirmed); denied, the model hears so.
func (t *turn) confirmed(ctx context.Context) error {
	p := t.confirm
	c := llm.ToolCall{ID: p.CallID, Name: p.Tool, Arguments: string(p.Arguments)}
	// The model reads the call under an id of the seam's, as in the loop:
	// the gateway's (turn_….n) has a dot, which Anthropic refuses in a
	// tool_use id.
	seen := c
	seen.ID = llm.NewCallID()
	t.msgs = append(t.msgs, llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{seen}})
	var out string
	if *t.req.Confirm.Allow {
		var err error
		if out, err = t.execute(ctx, c, true); err != nil {
			return err
		}
	} else {
		out = tools.Failf("denied", "The user chose not to do this.").Output()
		t.keepCall(c, "denied")
	}
	t.msgs = append(t.msgs, llm.Message{Role: llm.RoleTool, ToolCallID: seen.ID, Content: out})
	return nil
}

// execute runs one call through the shared executor, reports it and
// returns what the model reads.
func (t *turn) execute(ctx context.Context, c llm.ToolCall, confirmed bool) (string, error) {
	if err := t.out.Send("tool", toolEvent(c, "started")); err != nil {
		return "", err
	}
	res, err := t.s.tools.Execute(ctx, t.withScreen(tools.Call{
		SessionID: t.sessionID, SessionKind: tools.KindChat, Source: "chat", CallID: c.ID,
		Name: c.Name, Arguments: []byte(c.Arguments), Principal: t.p, Confirmed: confirmed, Plan: t.ticket.Plan,
	}))
	if err != nil {
		if ctx.Err() != nil {
			return "", unit.CtxError(ctx, err)
		}
		return t.refused(c, err)
	}
	t.screened(res.Screened)
	for _, f := range res.SafetyFlags {
		t.flag(f)
	}
	if res.Error != nil && res.Error.Code == tools.UnsafeArguments {
		return t.unsafe(c, res)
	}
	state := "finished"
	if res.Error != nil {
		state = "failed"
	}
	t.keepCall(c, state)
	partials := t.answer.addCards(res.Cards, res.Partials)
	t.answer.DBWrites = append(t.answer.DBWrites, res.DBWrites...)
	if err := t.out.Send("tool", toolEvent(c, state)); err != nil {
		return "", err
	}
	for _, p := range partials {
		if err := t.out.Send("partial", map[string]any{"kind": p.Kind, "data": p.Data}); err != nil {
			return "", err
		}
	}
	return res.Output, nil
}

// refused answers a call the executor would not run (unknown tool, not
// allowed, bad arguments): that is the model's mistake, so it reads why
// and may try again. A failure of the gateway's own ends the turn.
func (t *turn) refused(c llm.ToolCall, err error) (string, error) {
	switch apierr.CodeOf(err) {
	case apierr.Internal, apierr.Unavailable:
		return "", err
	case apierr.ToolValidation:
		if t.forced(c) {
			return "", workflowOutputError(c, err)
		}
	}
	t.keepCall(c, "refused")
	return tools.Refusal(err).Output(), t.out.Send("tool", toolEvent(c, "failed"))
}

// unsafe answers a call the executor's screen refused (a claim or
// personal data in its arguments): the model reads why and may try again;
// the call is kept without its arguments.
func (t *turn) unsafe(c llm.ToolCall, res tools.Result) (string, error) {
	t.answer.ToolCalls = append(t.answer.ToolCalls, ToolCall{CallID: c.ID, Name: c.Name, State: "refused"})
	return res.Output, t.out.Send("tool", toolEvent(c, "failed"))
}

// forced says whether c is the call the turn's workflow forced: the first
// call of a turn that names a workflow and answers no confirmation.
func (t *turn) forced(c llm.ToolCall) bool {
	return t.req.Workflow != "" && t.confirm == nil && c.Name == t.req.Workflow && c.ID == t.turnID+".1"
}

// workflowOutputError fails a turn whose forced workflow call the tool
// refused. The app asked for that tool's output (a plan whose arguments
// are the answer), so arguments that are not JSON are the model's
// unreadable output (AI_PARSE_ERROR) and arguments that break the tool's
// schema its invalid output (AI_VALIDATION_ERROR), never a second try the
// app did not ask for.
func workflowOutputError(c llm.ToolCall, err error) error {
	if a := strings.TrimSpace(c.Arguments); a != "" && !json.Valid([]byte(a)) {
		return apierr.Wrap(apierr.AIParseError, "", err)
	}
	return apierr.Wrap(apierr.AIValidation, "", err)
}

// keepCall keeps a call with the answer. It keeps the arguments for the
// history, except a tool's whose arguments the app must never see (an open
// SQL tool's statement).
func (t *turn) keepCall(c llm.ToolCall, state string) {
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
// stores it, stopping the loop. Arguments that fail validation go back to
// the model like any refused call: a call that could never run is never
// offered to the user.
func (t *turn) askConfirmation(ctx context.Context, tool *tools.Tool, c llm.ToolCall, said string) (agent.Outcome, error) {
	_, args, err := t.s.tools.Check(ctx, t.withScreen(tools.Call{SessionID: t.sessionID, SessionKind: tools.KindChat, Source: "chat",
		CallID: c.ID, Name: c.Name, Arguments: []byte(c.Arguments), Principal: t.p, Plan: t.ticket.Plan}))
	if u := (*tools.Unsafe)(nil); errors.As(err, &u) {
		t.screened(u.Result.Screened)
		for _, f := range u.Result.SafetyFlags {
			t.flag(f)
		}
		out, err := t.unsafe(c, u.Result)
		return agent.Outcome{Output: out}, err
	}
	if err != nil {
		out, err := t.refused(c, err)
		return agent.Outcome{Output: out}, err
	}
	err = t.s.storePending(ctx, t.p.UserID, pending{CallID: c.ID, SessionID: t.sessionID, TurnID: t.turnID,
		Tool: tool.Name, Arguments: args, AssistantText: said}, t.fresh)
	if err != nil {
		return agent.Outcome{}, err
	}
	t.fresh = false
	shown := t.shownArgs(c.Name, args)
	t.answer.ToolCalls = append(t.answer.ToolCalls, ToolCall{CallID: c.ID, Name: c.Name, State: "pending", Arguments: shown})
	payload := map[string]any{"call_id": c.ID, "name": tool.Name, "tier": string(tool.Tier)}
	if shown != nil {
		payload["arguments"] = shown
	}
	t.answer.Actions = append(t.answer.Actions, Action{Type: "confirm", Label: tool.Description, Payload: payload})
	return agent.Outcome{Stop: true}, t.out.Send("confirmation_required", map[string]string{
		"call_id": c.ID, "name": tool.Name, "description": tool.Description, "tier": string(tool.Tier)})
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

// withScreen gives a call the turn's screening options: the executor reads
// its arguments and cards in the turn's language, looks for the user's
// display name, and asks the turn's judge (whose questions the turn
// records and prices) about sentences the claim model is unsure of, as
// the answer's filter does.
func (t *turn) withScreen(c tools.Call) tools.Call {
	o := t.screen.Options()
	c.Language, c.DisplayName, c.Judge, c.JudgeBand = o.Language, o.DisplayName, o.Judge, o.JudgeBand
	return c
}
