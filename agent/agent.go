// Package agent runs the model↔tool loop (DESIGN §1, §7): a model call
// with the tool list, the tool calls it made, the model again with their
// outputs, at most MaxIterations times. Chat turns run it, and GPT-Live
// delegations will too, so it knows neither: what a caller does with the
// loop's text, progress and tool calls is its Host. It imports llm and
// nothing above it.
package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"strings"

	"github.com/voxgate/voxgate/llm"
)

// MaxIterations bounds the model calls of one loop.
const MaxIterations = 10

// Phase is a stretch of the loop's work a host may show.
type Phase int

const (
	// Thinking: from a model call's start to its first text, or its end.
	Thinking Phase = iota + 1
	// Working: one model response's tool calls, from the first to the last.
	Working
)

// Host is what the loop's caller does as the loop goes. Its errors end the
// loop and come back from Run unchanged.
type Host interface {
	// Progress marks a phase's start (done false) and its end (done true);
	// every start is ended unless the loop fails first.
	Progress(ctx context.Context, p Phase, done bool) error
	// Text is a delta of the answer, in order.
	Text(ctx context.Context, delta string) error
	// Call runs one tool call; said is the text the model wrote with it.
	// A Stop outcome ends the loop at that call (it waits for the user's
	// confirmation, say): the response's later calls are not run.
	Call(ctx context.Context, c llm.ToolCall, said string) (Outcome, error)
}

// Outcome is what the model reads back from one call.
type Outcome struct {
	// Output is the tool message the model reads; ignored when Stop.
	Output string
	Stop   bool
}

// Usage is what a loop's model calls used: the provider's reported counts
// summed across calls, plus ceil(bytes/4) estimates for calls cut before
// they reported.
type Usage struct {
	llm.Usage // Model is the last one the provider named
	// Calls counts the model calls started, reported or not.
	Calls int64
	// Estimated is set when some counts are estimates.
	Estimated bool
	// Each is every call's usage in order, reported or estimated: what a
	// record is made of (billing.FromCalls), with each call's classes and
	// tier, which the sums above do not keep.
	Each []llm.Usage
}

// Result is how a loop ended. Run returns it with its error too: a failed
// loop still used what it used.
type Result struct {
	Text    string // every text delta, in order
	Usage   Usage
	Stopped bool // a Call asked the loop to stop
}

// Run runs the loop on req: req.Messages and req.Tools are the
// conversation and the tool list; a tool's name in req.ToolChoice forces
// that tool in the first call only. The last call is made with tool choice
// "none", so a model that keeps calling tools still answers. Calls are
// keyed by their ToolCall.ID, which the llm seam mints; deltas of a call
// (llm.EventToolCallDelta) are ignored, and only the whole call runs.
//
// A provider's failure comes back as an *llm.Error. A panic in the
// provider or the host ends the loop with an error, the usage so far
// intact, so a caller can always settle what was used.
func Run(ctx context.Context, p llm.Provider, req llm.Request, h Host) (res Result, err error) {
	l := &loop{p: p, h: h, req: req}
	l.req.Messages = append([]llm.Message(nil), req.Messages...)
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("agent: loop panicked: %v\n%s", r, debug.Stack())
		}
		res = Result{Text: l.text.String(), Usage: l.usage, Stopped: l.stopped}
	}()
	return res, l.run(ctx)
}

type loop struct {
	p       llm.Provider
	h       Host
	req     llm.Request
	text    strings.Builder
	usage   Usage
	stopped bool
}

func (l *loop) run(ctx context.Context) error {
	first := l.req.ToolChoice
	for i := 0; i < MaxIterations; i++ {
		choice := "auto"
		switch {
		case len(l.req.Tools) == 0:
			choice = ""
		case i == MaxIterations-1:
			choice = "none"
		case i == 0 && first != "":
			choice = first
		}
		said, calls, err := l.call(ctx, choice)
		if err != nil {
			return err
		}
		if len(calls) == 0 || choice == "none" {
			return nil
		}
		if err := l.runCalls(ctx, said, calls); err != nil || l.stopped {
			return err
		}
	}
	return nil
}

// call makes one streamed model call, handing its text to the host, and
// returns the text and the whole tool calls it made.
func (l *loop) call(ctx context.Context, choice string) (string, []llm.ToolCall, error) {
	req := l.req
	req.Tools, req.ToolChoice = nil, ""
	if choice != "" {
		req.Tools, req.ToolChoice = l.req.Tools, choice
	}
	if err := l.h.Progress(ctx, Thinking, false); err != nil {
		return "", nil, err
	}
	thinking := true
	endThinking := func() error {
		if !thinking {
			return nil
		}
		thinking = false
		return l.h.Progress(ctx, Thinking, true)
	}
	l.usage.Calls++
	stream, err := l.p.Stream(ctx, req)
	if err != nil {
		return "", nil, l.providerError(err)
	}
	defer stream.Close()
	var text strings.Builder
	var calls []llm.ToolCall
	for {
		ev, err := stream.Next(ctx)
		if errors.Is(err, io.EOF) {
			err = &llm.Error{Provider: l.p.Name(), Code: llm.ProviderInvalidResponse,
				Err: errors.New("stream ended without a finish")}
		}
		if err != nil {
			// A failure the provider reported the call's usage for (a cut
			// after its usage, a content filter) is billed as reported;
			// one cut before is counted the way providers count, so the
			// record is not $0.
			var le *llm.Error
			if errors.As(err, &le) && le.Usage != nil {
				l.add(le.Usage, req, text.String())
			} else {
				l.estimate(req, text.String())
			}
			return "", nil, l.providerError(err)
		}
		switch ev.Kind {
		case llm.EventText:
			if ev.Text == "" {
				continue
			}
			if err := endThinking(); err != nil {
				l.estimate(req, text.String())
				return "", nil, err
			}
			text.WriteString(ev.Text)
			l.text.WriteString(ev.Text)
			if err := l.h.Text(ctx, ev.Text); err != nil {
				l.estimate(req, text.String())
				return "", nil, err
			}
		case llm.EventToolCall:
			if ev.ToolCall != nil {
				calls = append(calls, *ev.ToolCall)
			}
		case llm.EventDone:
			l.add(ev.Usage, req, text.String())
			return text.String(), calls, endThinking()
		}
		// EventToolCallDelta is progress for a router's commit point; a
		// partial call never runs, so the loop waits for the whole one.
	}
}

// runCalls answers one model response's calls, in order, keyed by their
// ids, until one stops the loop.
func (l *loop) runCalls(ctx context.Context, said string, calls []llm.ToolCall) error {
	for i := range calls {
		if calls[i].ID == "" {
			// An adapter that mints no id would leave the call unanswerable.
			calls[i].ID = llm.NewCallID()
		}
	}
	l.req.Messages = append(l.req.Messages, llm.Message{Role: llm.RoleAssistant, Content: said, ToolCalls: calls})
	if err := l.h.Progress(ctx, Working, false); err != nil {
		return err
	}
	for _, c := range calls {
		out, err := l.h.Call(ctx, c, said)
		if err != nil {
			return err
		}
		if out.Stop {
			l.stopped = true
			break
		}
		l.req.Messages = append(l.req.Messages, llm.Message{Role: llm.RoleTool, ToolCallID: c.ID, Content: out.Output})
	}
	return l.h.Progress(ctx, Working, true)
}

// add counts a reported call, or estimates one that reported nothing.
func (l *loop) add(u *llm.Usage, req llm.Request, text string) {
	if u == nil {
		l.estimate(req, text)
		return
	}
	if u.Model != "" {
		l.usage.Model = u.Model
	}
	l.usage.InputTokens += u.InputTokens
	l.usage.CachedInputTokens += u.CachedInputTokens
	l.usage.CacheWriteInputTokens += u.CacheWriteInputTokens
	l.usage.OutputTokens += u.OutputTokens
	l.usage.Each = append(l.usage.Each, *u)
}

// estimate counts a call the provider never reported on (llm.EstimateInput).
func (l *loop) estimate(req llm.Request, text string) {
	l.usage.Estimated = true
	est := llm.Usage{InputTokens: llm.EstimateInput(req), OutputTokens: llm.EstimateOutput(len(text))}
	l.usage.InputTokens += est.InputTokens
	l.usage.OutputTokens += est.OutputTokens
	l.usage.Each = append(l.usage.Each, est)
}

// providerError keeps the seam's promise that a provider fails with an
// *llm.Error; one that does not is reported as unavailable.
func (l *loop) providerError(err error) error {
	var le *llm.Error
	if errors.As(err, &le) {
		return err
	}
	return &llm.Error{Provider: l.p.Name(), Code: llm.ProviderUnavailable, Err: err}
}
