package llm

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"
	"unicode"
)

// A committed answer cut short (a cut, a stall, an unreadable chunk) is
// continued on a target that declares it can continue a partial answer
// (Target.Continue, DESIGN §11 "Commit point"), so the caller reads one
// answer with nothing repeated; docs/llm.md, "Continuation".

// errDiverged ends a continuation that contradicts a tool call the caller
// already has part of: what it sent cannot be taken back.
var errDiverged = errors.New("the continuation began again a tool call the caller has part of, differently")

// soFar is what the caller has been given of the answer, across legs: the
// text, each tool call begun (by Index) with the arguments sent, and how
// many whole calls were sent. For the leg being read it keeps that leg's
// own arguments by index and its call ids mapped to the ids the caller
// has, so a continuation that begins a call again sends only what extends
// it.
type soFar struct {
	text strings.Builder
	// owed is the white space the caller has after the text a
	// continuation was given: Anthropic refuses a prefill that ends in
	// white space, so the prefill leaves it out, and the model writes it
	// again at the start of its continuation, where pass drops it.
	owed    string
	calls   map[int]*sentCall
	whole   int
	legArgs map[int]string
	ids     map[string]string
}

// sentCall is a tool call as the caller has it.
type sentCall struct{ id, name, args string }

func newSoFar() soFar {
	return soFar{calls: map[int]*sentCall{}, legArgs: map[int]string{}, ids: map[string]string{}}
}

// newLeg forgets the last leg's own pieces: a continuation's calls begin
// again from their first piece.
func (so *soFar) newLeg() {
	so.legArgs, so.ids = map[int]string{}, map[string]string{}
}

// pass records ev as given to the caller and returns what of it is new,
// ok false when nothing is, or errDiverged.
func (so *soFar) pass(ev Event) (Event, bool, error) {
	switch ev.Kind {
	case EventText:
		if so.owed != "" {
			ev.Text = so.settle(ev.Text)
			if ev.Text == "" {
				return ev, false, nil
			}
		}
		so.text.WriteString(ev.Text)
	case EventToolCallDelta:
		if ev.ToolCall != nil {
			return so.callDelta(ev)
		}
	case EventToolCall:
		so.whole++
		if ev.ToolCall == nil {
			break
		}
		if id := so.ids[ev.ToolCall.ID]; id != "" && id != ev.ToolCall.ID {
			// The call the caller saw begin runs under the id it saw.
			tc := *ev.ToolCall
			tc.ID = id
			ev.ToolCall = &tc
		}
	}
	return ev, true, nil
}

// callDelta passes a piece of a tool call: a call new to the caller as it
// comes; a call a cut leg had begun, only the arguments beyond what the
// caller has, under the caller's id.
func (so *soFar) callDelta(ev Event) (Event, bool, error) {
	piece := ev.ToolCall
	sent := so.calls[ev.Index]
	header := sent == nil
	switch {
	case header:
		sent = &sentCall{id: piece.ID, name: piece.Name}
		so.calls[ev.Index] = sent
		so.ids[piece.ID] = piece.ID
	case piece.ID != "":
		if piece.Name != sent.name {
			return Event{}, false, errDiverged
		}
		so.ids[piece.ID] = sent.id
	}
	so.legArgs[ev.Index] += piece.Arguments
	args := so.legArgs[ev.Index]
	var fresh string
	switch {
	case strings.HasPrefix(sent.args, args): // the caller has all of it
	case strings.HasPrefix(args, sent.args):
		fresh = args[len(sent.args):]
		sent.args = args
	default:
		return Event{}, false, errDiverged
	}
	if header {
		out := *piece
		out.Arguments = fresh
		ev.ToolCall = &out
		return ev, true, nil
	}
	if fresh == "" {
		return Event{}, false, nil
	}
	return Event{Kind: EventToolCallDelta, Index: ev.Index, ToolCall: &ToolCall{Arguments: fresh}}, true, nil
}

// continuation is req continued from what the caller has: the text so far
// as a trailing assistant message, marked Continue. With no text yet (only
// a tool call begun) it is req as it was, which the target answers from
// the start: the call begun is restarted, never run half-way.
//
// The prefill leaves out the text's trailing white space (Anthropic refuses
// a final assistant message that ends in it, docs/sim.md); the
// continuation's leading white space, up to as much, is dropped, since the
// caller has it.
func (so *soFar) continuation(req Request) Request {
	text := so.text.String()
	prefill := strings.TrimRightFunc(text, unicode.IsSpace)
	if prefill == "" {
		return req
	}
	so.owed = text[len(prefill):]
	req.Messages = append(slices.Clip(req.Messages), Message{Role: RoleAssistant, Content: prefill})
	req.Continue = true
	return req
}

// settle is a continuation's text without the white space at its start
// that the caller already has (owed), which is then paid.
func (so *soFar) settle(text string) string {
	lead := len(text) - len(strings.TrimLeftFunc(text, unicode.IsSpace))
	drop := min(lead, len(so.owed))
	if drop < len(text) {
		so.owed = "" // the continuation's words have begun
	} else {
		so.owed = so.owed[drop:]
	}
	return text[drop:]
}

// continueAfter starts a continuation of the answer the leg cut was giving:
// on the route's targets after cut's that declare prefill, then on cut's
// own target, each at most once a routed call, one try each, within the
// route's budget and each target's deadlines. It returns the committed
// continuation and the events it read, nil when no target could continue
// (the cut stands: a refusal of the prefill never replaces it), or the
// caller's own end.
func (s *routedStream) continueAfter(ctx context.Context, cut *leg) (*leg, []Event, error) {
	if s.so.whole > 0 {
		// A whole tool call is with the caller, which may be running it: a
		// prefill cannot hold a call without its result.
		s.c.r.metrics.continuation(s.c.route.Name, continuationNone)
		return nil, nil, nil
	}
	req := s.so.continuation(s.c.req)
	for _, t := range s.candidates(cut.t) {
		s.continued[t.String()] = true
		if time.Until(s.c.deadline) <= 0 {
			s.c.record(Attempt{Provider: t.Provider, Model: t.Model, Outcome: OutcomeBudgetExhausted})
			break
		}
		p := s.c.r.providers[t.Provider]
		switch {
		case p == nil:
			s.c.record(Attempt{Provider: t.Provider, Model: t.Model, Outcome: OutcomeNotConfigured})
			continue
		case unhonoured(p, req) != "":
			s.c.record(Attempt{Provider: t.Provider, Model: t.Model, Outcome: OutcomeUnsupported})
			continue
		}
		b := s.c.r.breakers[t.String()]
		ok, probe := b.allow(s.c.r.now())
		if !ok {
			s.c.record(Attempt{Provider: t.Provider, Model: t.Model, Outcome: OutcomeCircuitOpen})
			continue
		}
		// Under the stream's life (Close ends it) and, until it commits,
		// the context of the Next that waits for it.
		actx, cancel := context.WithCancel(s.life)
		stop := context.AfterFunc(ctx, cancel)
		l, buf, err := s.c.attempt(actx, t, p, b, probe, req)
		stop()
		if err == nil {
			s.c.handOver(cut.index, l.index)
			s.so.newLeg()
			s.c.r.metrics.continuation(s.c.route.Name, continuationDone)
			return l, buf, nil
		}
		cancel()
		switch {
		case s.closed.Load():
			return nil, nil, ErrClosed
		case ctx.Err() != nil:
			return nil, nil, ctx.Err()
		case s.parent.Err() != nil:
			return nil, nil, s.parent.Err()
		}
	}
	s.c.r.metrics.continuation(s.c.route.Name, continuationNone)
	return nil, nil, nil
}

// candidates are the targets that may continue an answer cut on cut: those
// after it in the route that declare prefill, then cut's own once, if it
// declares it, leaving out any that has continued (or tried to) already.
func (s *routedStream) candidates(cut Target) []Target {
	ts := s.c.route.Targets
	at := slices.IndexFunc(ts, func(t Target) bool { return t.String() == cut.String() })
	var out []Target
	for _, t := range append(slices.Clone(ts[at+1:]), cut) {
		if t.Continue == ContinuePrefill && !s.continued[t.String()] && !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}
