package responses

import (
	"context"
	"errors"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/llm"
)

// What an exchange used and how it ends: its usage (reported, else
// estimated as the chat turn estimates), and the stored response.

// complete marks the response completed with its usage.
func (x *exchange) complete() {
	t := now()
	x.resp.Status, x.resp.CompletedAt, x.resp.Usage = "completed", &t, newUsage(*x.usage)
}

// keep stores the finished response when the client asked (store, by
// default true). A response that cannot be kept is not given as one the
// client could continue from.
func (x *exchange) keep(ctx context.Context) error {
	if !x.resp.Store {
		return nil
	}
	if err := x.s.save(ctx, x.p.UserID, x.resp, x.conv); err != nil {
		x.s.env.Log.ErrorContext(ctx, "responses: a response could not be stored", "id", x.resp.ID, "err", err)
		return apierr.New(apierr.Unavailable, "This response could not be stored. Please try again, or send store: false.").WithRetry(5)
	}
	return nil
}

// done takes the end of a whole answer: its usage and trace.
func (x *exchange) done(ev llm.Event) {
	x.trace = ev.Trace
	if ev.Usage != nil {
		u := *ev.Usage
		x.usage = &u
		return
	}
	x.estimate()
}

// failed takes a failure: the trace's billed attempts, and for one after
// commit the answering attempt's usage, reported or estimated.
func (x *exchange) failed(err error) {
	x.audit.failure = err
	var re *llm.RouteError
	if !errors.As(err, &re) {
		if x.target.Model != "" {
			x.estimate()
		}
		return
	}
	x.trace = re.Trace
	if !re.Committed {
		return
	}
	if a, ok := re.Trace.Answered(); ok && a.Usage != nil {
		u := *a.Usage
		x.usage = &u
		return
	}
	x.estimate()
}

func (x *exchange) estimate() {
	x.usage = &llm.Usage{InputTokens: llm.EstimateInput(x.llmReq), OutputTokens: llm.EstimateOutput(x.sent)}
	x.estimated = true
}

// took counts what an event brought, for an estimate should the provider
// report nothing.
func (x *exchange) took(ev llm.Event) {
	switch ev.Kind {
	case llm.EventText:
		x.sent += len(ev.Text)
	case llm.EventToolCallDelta:
		if ev.ToolCall != nil {
			x.sent += len(ev.ToolCall.Name) + len(ev.ToolCall.Arguments)
		}
	}
}
