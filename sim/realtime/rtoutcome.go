package realtime

import (
	"github.com/voxgate/voxgate/sim/core"
	"github.com/voxgate/voxgate/sim/openai"
)

// How a response ends besides completed and cancelled: incomplete when it
// hits max_output_tokens or the content filter (a fault) cuts it, failed
// (a fault) with status_details.error. Both are decided when the response
// starts, since its message streams from the start.

// Realtime response fault kinds, drawn when a response starts.
const (
	// FaultResponseFailed makes a response fail before any output:
	// status failed with status_details.error.
	FaultResponseFailed core.FaultKind = "response_failed"
)

// outputLimit is the response's max_output_tokens: response.create's, else
// the session's; 0 means "inf".
func outputLimit(session sessionConfig, params map[string]any) int {
	v, ok := params["max_output_tokens"]
	if !ok {
		v = session["max_output_tokens"]
	}
	if n, isNum := v.(float64); isNum {
		return int(n)
	}
	return 0
}

// shape decides the response's outcome and cuts its reply to match.
func (ss *rtSession) shape(a *activeResponse, limit int) {
	if f := ss.srv.env.Faults.Take(ss.endpoint, ss.view.model, core.FaultContentFilter, FaultResponseFailed); f != nil {
		ss.srv.env.Stats.Fault(ss.endpoint, f.Kind)
		switch f.Kind {
		case FaultResponseFailed:
			a.rep, a.audioMS, a.failed = openai.Answer{}, 0, true
			return
		case core.FaultContentFilter:
			a.rep.Text = openai.TruncateUTF8(a.rep.Text, len(a.rep.Text)/2)
			a.audioMS = a.audioMS / 2 / PacketMS * PacketMS
			a.rep.Calls, a.cut = nil, "content_filter"
		}
	}
	if limit > 0 && outTokens(a.rep, a.audioMS) > limit {
		a.cut = "max_output_tokens"
		fitOutput(a, limit)
	}
}

// outTokens is the output usage of a reply: one text count over the
// transcript and every call, plus the spoken audio.
func outTokens(rep openai.Answer, audioMS int) int {
	b := len(rep.Text)
	for _, c := range rep.Calls {
		b += len(c.Name) + len(c.Arguments)
	}
	return openai.TokensFor(b) + audioOutTokens(audioMS)
}

// fitOutput cuts a's reply to at most limit output tokens, as a model that
// runs out of tokens stops: the message shrinks (transcript and audio in
// proportion) and the calls after it are dropped; with no message, calls
// are kept while they fit whole, and the first that does not goes out with
// the arguments that fit (none at all when not even its name does).
func fitOutput(a *activeResponse, limit int) {
	calls := a.rep.Calls
	a.rep.Calls = nil
	if a.rep.Text == "" {
		for _, c := range calls {
			next := openai.Answer{Calls: append(a.rep.Calls, c)}
			if outTokens(next, 0) > limit {
				for len(c.Arguments) > 0 && outTokens(openai.Answer{Calls: append(a.rep.Calls, c)}, 0) > limit {
					c.Arguments = openai.TruncateUTF8(c.Arguments, len(c.Arguments)-1)
				}
				if outTokens(openai.Answer{Calls: append(a.rep.Calls, c)}, 0) <= limit {
					a.cutCall = &c
				}
				break
			}
			a.rep = next
		}
		return
	}
	full := outTokens(a.rep, a.audioMS)
	text, ms := a.rep.Text, a.audioMS
	text = openai.TruncateUTF8(text, len(text)*limit/full)
	ms = ms * limit / full / PacketMS * PacketMS
	for outTokens(openai.Answer{Text: text}, ms) > limit {
		if ms >= PacketMS {
			ms -= PacketMS
		}
		if len(text) > 0 {
			text = openai.TruncateUTF8(text, len(text)-1)
		}
	}
	a.rep.Text, a.audioMS = text, ms
}

// finishOutcome sets the final status of a response that was not
// cancelled.
func finishOutcome(a *activeResponse) {
	switch {
	case a.failed:
		a.resp.Status = "failed"
		a.resp.StatusDetails = &statusDetails{Type: "failed", Error: &statusError{Type: "server_error", Code: "response_failed"}}
	case a.cut != "":
		a.resp.Status = "incomplete"
		a.resp.StatusDetails = &statusDetails{Type: "incomplete", Reason: a.cut}
	default:
		a.resp.Status = "completed"
	}
}

// rateLimits is the rate_limits.updated a response starts with: a fixed
// budget, less this session's responses and this response's input.
func (ss *rtSession) rateLimits(a *activeResponse) *rtEvent {
	const requests, tokens = 10000, 200000
	n := int(ss.stats.snapshot().Responses)
	ev := newEvent("rate_limits.updated")
	ev.RateLimits = []rateLimit{
		{Name: "requests", Limit: requests, Remaining: max(0, requests-n), ResetSeconds: 60},
		{Name: "tokens", Limit: tokens, Remaining: max(0, tokens-a.in.text-a.in.audio), ResetSeconds: 60},
	}
	return ev
}
