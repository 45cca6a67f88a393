package sse

import (
	"github.com/voxgate/voxgate/safety"
	"github.com/voxgate/voxgate/tools"
)

// filter makes the turn's final response from what it gathered (DESIGN
// §7 step 8): the answer's text, the cards, actions and writes of its
// tool calls, and the safety flags they raised (a value outside its
// physiological range blocks its write; package safety). The output
// filters of DESIGN §12 (medical claims, prescriptive tone, PII) belong
// here, between the model's text and the response, when they are built.
func (t *turn) filter() *Response {
	a := t.answer
	resp := &Response{Version: "1.0", SessionID: t.sessionID, MessageID: newID("msg_"), Message: t.text,
		Language: t.language, Cards: a.Cards, CardsOmitted: a.CardsOmitted, Actions: a.Actions, DBWrites: a.DBWrites,
		SafetyFlags: a.SafetyFlags, Suggestions: a.Suggestions, Degraded: t.degraded, Usage: UsageBlock{Plan: t.ticket.Plan}}
	resp.nonNil()
	return resp
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
