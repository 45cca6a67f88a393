package chat

import (
	"github.com/voxgate/voxgate/safety"
	"github.com/voxgate/voxgate/tools"
	"github.com/voxgate/voxgate/unit"
)

// filter makes the turn's final response from what it gathered (DESIGN
// §7 step 8): the answer's text as the output filters let it out
// (screen.go: the rest the stream filter held, the fallback after a
// blocked claim; personal data fails the turn with AI_PII_LEAK), the
// cards, actions and writes of its tool calls, and the safety flags they
// and the filters raised (a value outside its physiological range blocks
// its write; package safety).
func (t *turn) filter() (*Response, error) {
	if err := t.closeScreen(); err != nil {
		return nil, err
	}
	v := t.judgedAnswer()
	a := t.answer
	resp := &Response{Version: "1.0", SessionID: t.sessionID, MessageID: unit.NewID("msg_"), Message: t.text,
		Language: t.language, Cards: a.Cards, CardsOmitted: a.CardsOmitted, Actions: a.Actions, DBWrites: a.DBWrites,
		SafetyFlags: append(a.SafetyFlags, v.Flags...), Suggestions: a.Suggestions, Degraded: t.degraded, Usage: UsageBlock{Plan: t.ticket.Plan}}
	resp.nonNil()
	return resp, nil
}

// nonNil makes the response's lists [] rather than null.
func (r *Response) nonNil() {
	if r.Cards == nil {
		r.Cards = []tools.Card{}
	}
	if r.Suggestions == nil {
		r.Suggestions = []Suggestion{}
	}
	if r.Actions == nil {
		r.Actions = []Action{}
	}
	if r.DBWrites == nil {
		r.DBWrites = []tools.DBWrite{}
	}
	if r.SafetyFlags == nil {
		r.SafetyFlags = []safety.Flag{}
	}
}
