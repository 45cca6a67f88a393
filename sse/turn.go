package sse

import (
	"context"
	"errors"
	"io"
	"strings"
	"time"

	"github.com/voxgate/voxgate/billing"
	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/auth"
	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/quota"
)

// sink receives a turn's events: a stream sends them, a stream:false
// request drops them (its final response carries everything).
type sink interface {
	send(event string, v any) error
}

type discard struct{}

func (discard) send(string, any) error { return nil }

// Status labels the app shows while a turn works (DESIGN §7).
const (
	labelThinking  = "Understanding your question…"
	labelSearching = "Looking up your data…"
)

// turn is one admitted POST /v1/chat: it owns the quota ticket until it
// settles, whatever happens.
type turn struct {
	s         *Service
	p         auth.Principal
	req       *Request
	ticket    *quota.Ticket
	sessionID string
	fresh     bool // the session is new: its row is not written yet
	turnID    string
	confirm   *pending // the confirmation this request answers
	key       string   // the Idempotency-Key, "" without one
	out       sink
	started   time.Time

	msgs     []llm.Message
	text     strings.Builder // the answer: every content delta, in order
	nextCall int

	// Metering: what the provider reported, plus estimates for calls that
	// were cut before they reported.
	usage     billing.Usage
	model     string
	calls     int64
	estimated bool

	language string
	answer   messageData
	pending  bool // the turn ended waiting for a confirmation
}

// callID keys a provider's call by turn: provider ids are unique only
// within one response (and some providers send none), so (session,
// call_id) never collides across turns.
func (t *turn) callID() string {
	t.nextCall++
	return t.turnID + "." + itoa(t.nextCall)
}

func itoa(n int) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			return string(b[i:])
		}
	}
}

func (t *turn) status(kind, label, state string) error {
	return t.out.send("status", map[string]string{"status": kind, "label": label, "state": state})
}

// loop runs the model↔tool loop: at most MaxIterations model calls, the
// first forced to the workflow's tool when one is named, the last made
// without tools so the turn ends with an answer.
func (t *turn) loop(ctx context.Context) error {
	specs := t.s.toolSpecs(t.ticket.Plan)
	for i := 0; i < MaxIterations; i++ {
		choice := "auto"
		switch {
		case len(specs) == 0:
			choice = ""
		case i == MaxIterations-1:
			choice = "none"
		case i == 0 && t.req.Workflow != "" && t.confirm == nil:
			choice = t.req.Workflow
		}
		text, calls, err := t.callModel(ctx, specs, choice)
		if err != nil {
			return err
		}
		if len(calls) == 0 || choice == "none" {
			return nil
		}
		stop, err := t.runTools(ctx, text, calls)
		if err != nil || stop {
			return err
		}
	}
	return nil
}

// callModel makes one streamed model call, sending its text as content
// events, and returns the text and the tool calls it made.
func (t *turn) callModel(ctx context.Context, specs []llm.ToolSpec, choice string) (string, []llm.ToolCall, error) {
	req := llm.Request{Model: t.s.cfg.Model, Messages: t.msgs, MaxOutputTokens: t.s.cfg.MaxOutputTokens,
		ReasoningEffort: t.s.cfg.ReasoningEffort, SafetyIdentifier: t.s.safetyID.For(t.p.UserID)}
	if choice != "" {
		req.Tools, req.ToolChoice = specs, choice
	}
	if err := t.status("thinking", labelThinking, "start"); err != nil {
		return "", nil, err
	}
	thinking := true
	endThinking := func() error {
		if !thinking {
			return nil
		}
		thinking = false
		return t.status("thinking", labelThinking, "complete")
	}
	t.calls++
	stream, err := t.s.provider.Stream(ctx, req)
	if err != nil {
		return "", nil, providerError(ctx, err)
	}
	defer stream.Close()
	var text strings.Builder
	var calls []llm.ToolCall
	for {
		ev, err := stream.Next(ctx)
		if errors.Is(err, io.EOF) {
			err = &llm.Error{Provider: t.s.provider.Name(), Code: llm.ProviderInvalidResponse,
				Err: errors.New("stream ended without a finish")}
		}
		if err != nil {
			// Cut before the provider reported usage: count what was sent
			// and received the way providers do, so the record is not $0.
			t.estimate(req, text.String())
			return "", nil, providerError(ctx, err)
		}
		switch ev.Kind {
		case llm.EventText:
			if ev.Text == "" {
				continue
			}
			if err := endThinking(); err != nil {
				t.estimate(req, text.String())
				return "", nil, err
			}
			text.WriteString(ev.Text)
			t.text.WriteString(ev.Text)
			if err := t.out.send("content", map[string]string{"content": ev.Text}); err != nil {
				t.estimate(req, text.String())
				return "", nil, err
			}
		case llm.EventToolCall:
			if ev.ToolCall != nil {
				calls = append(calls, *ev.ToolCall)
			}
		case llm.EventDone:
			t.addUsage(ev.Usage, req, text.String())
			return text.String(), calls, endThinking()
		}
	}
}

func (t *turn) addUsage(u *llm.Usage, req llm.Request, text string) {
	if u == nil {
		t.estimate(req, text)
		return
	}
	if u.Model != "" {
		t.model = u.Model
	}
	t.usage = t.usage.Add(billing.Usage{TextIn: u.InputTokens, TextCachedIn: u.CachedInputTokens,
		TextCacheWriteIn: u.CacheWriteInputTokens, TextOut: u.OutputTokens})
}

// estimate counts a call the provider never reported on: ceil(bytes/4)
// of the prompt in and of the text out, the usual rule of thumb.
func (t *turn) estimate(req llm.Request, text string) {
	in := 0
	for _, m := range req.Messages {
		in += len(m.Content)
		for _, c := range m.ToolCalls {
			in += len(c.Name) + len(c.Arguments)
		}
	}
	for _, s := range req.Tools {
		in += len(s.Name) + len(s.Description) + len(s.Parameters)
	}
	t.estimated = true
	t.usage = t.usage.Add(billing.Usage{TextIn: int64((in + 3) / 4), TextOut: int64((len(text) + 3) / 4)})
}

// providerError maps a model failure to DESIGN §11's client codes.
func providerError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctxError(ctx, err)
	}
	var le *llm.Error
	if !errors.As(err, &le) {
		return apierr.Wrap(apierr.AIUnavailable, "", err)
	}
	return le.Class().APIError(err)
}

// ctxError explains a turn whose context ended: the client left, the turn
// ran past its bound, or the server is shutting down.
func ctxError(ctx context.Context, err error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return apierr.Wrap(apierr.AIUnavailable, "The answer took too long. Please try again.", err).WithRetry(5)
	}
	return apierr.Wrap(apierr.Unavailable, "", context.Cause(ctx)).WithRetry(5)
}
