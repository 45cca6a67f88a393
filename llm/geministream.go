package llm

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"google.golang.org/genai"
)

// geminiStream reads genai's chunk iterator one chunk at a time (iter.Pull2)
// and turns each into events. Gemini sends each function call whole, so a
// call is announced at once with one EventToolCallDelta carrying all of
// it, and released as an EventToolCall only when the finish reason
// arrives: a call from a stream that fails before its end is never run.
type geminiStream struct {
	provider string
	caller   context.Context // Stream's ctx: its end is the caller's own
	upstream context.Context // the HTTP request's
	cancel   context.CancelCauseFunc
	timeout  time.Duration
	// timer cancels upstream with errTimedOut; it runs only while we wait
	// for a chunk.
	timer *time.Timer
	wire  *wireSeen

	mu      sync.Mutex // one reader at a time; Close waits for it
	next    func() (*genai.GenerateContentResponse, error, bool)
	stop    func()
	pending []Event
	calls   []*ToolCall
	finish  string
	usage   *Usage
	model   string
	err     error // sticky: returned by every later Next
	eof     bool  // EventDone was returned
	closed  bool
}

// first waits for the first chunk; Stream returns its failure.
func (s *geminiStream) first() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	resp, err, ok := s.pull()
	s.timer.Stop()
	switch {
	case err != nil:
		return s.classify(s.caller, err)
	case !ok:
		return s.invalid(errors.New("the stream ended before its first chunk"))
	}
	return s.take(resp)
}

// Next returns the next event, reading chunks as needed.
func (s *geminiStream) Next(ctx context.Context) (Event, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for {
		switch {
		case s.closed:
			return Event{}, ErrClosed
		case len(s.pending) > 0:
			ev := s.pending[0]
			s.pending = s.pending[1:]
			s.eof = ev.Kind == EventDone
			return ev, nil
		case s.err != nil:
			return Event{}, s.err
		case s.eof:
			return Event{}, io.EOF
		}
		if err := ctx.Err(); err != nil {
			return Event{}, err
		}
		if err := s.read(ctx); err != nil {
			s.err = err
			s.cancel(errClosing)
			if ctx.Err() != nil {
				return Event{}, err
			}
		}
	}
}

// read waits for one chunk, at most the timeout, and takes it.
func (s *geminiStream) read(ctx context.Context) error {
	stop := context.AfterFunc(ctx, func() { s.cancel(context.Cause(ctx)) })
	s.timer.Reset(s.timeout)
	resp, err, ok := s.pull()
	s.timer.Stop()
	if !stop() {
		return ctx.Err()
	}
	switch {
	case err != nil:
		return s.classify(s.caller, err)
	case !ok:
		return s.end()
	}
	return s.take(resp)
}

// errUndecodable is a chunk genai could not convert: its converters
// assert the JSON's types and panic on a mismatch (a "candidates" object
// where a list belongs), which a broken or hostile upstream must not turn
// into a crash.
var errUndecodable = errors.New("genai could not decode a chunk")

// pull is next, with genai's panic on an undecodable chunk made an error
// (iter.Pull2 re-raises the iterator's panic in the caller; the iterator is
// finished after it).
func (s *geminiStream) pull() (resp *genai.GenerateContentResponse, err error, ok bool) {
	defer func() {
		if v := recover(); v != nil {
			resp, err, ok = nil, fmt.Errorf("%w: %v", errUndecodable, v), false
		}
	}()
	return s.next()
}

// take turns one chunk into events.
func (s *geminiStream) take(r *genai.GenerateContentResponse) error {
	if r == nil {
		return s.invalid(errors.New("an empty chunk"))
	}
	if r.ModelVersion != "" {
		s.model = r.ModelVersion
	}
	if u := r.UsageMetadata; u != nil {
		s.usage = &Usage{
			InputTokens:       int64(u.PromptTokenCount), // cached tokens are part of it
			CachedInputTokens: int64(u.CachedContentTokenCount),
			OutputTokens:      int64(u.CandidatesTokenCount) + int64(u.ThoughtsTokenCount),
		}
	}
	if pf := r.PromptFeedback; pf != nil && pf.BlockReason != "" {
		return s.refused("the prompt was blocked: " + string(pf.BlockReason))
	}
	if len(r.Candidates) == 0 || r.Candidates[0] == nil {
		return nil // a chunk of usage only
	}
	cand := r.Candidates[0] // one candidate is asked for
	if cand.Content != nil {
		for _, p := range cand.Content.Parts {
			if err := s.part(p); err != nil {
				return err
			}
		}
	}
	if cand.FinishReason != "" && cand.FinishReason != genai.FinishReasonUnspecified {
		return s.finished(cand.FinishReason)
	}
	return nil
}

func (s *geminiStream) part(p *genai.Part) error {
	if p == nil || p.Thought { // thought summaries are not part of the answer
		return nil
	}
	if s.finish != "" && (p.Text != "" || p.FunctionCall != nil) {
		return s.invalid(errors.New("content after the finish reason"))
	}
	if p.Text != "" {
		s.pending = append(s.pending, Event{Kind: EventText, Text: p.Text})
	}
	fc := p.FunctionCall
	if fc == nil {
		return nil
	}
	if fc.Name == "" {
		return s.invalid(fmt.Errorf("function call %d has no name", len(s.calls)))
	}
	args := []byte("{}")
	if fc.Args != nil {
		b, err := json.Marshal(fc.Args)
		if err != nil {
			return s.invalid(fmt.Errorf("function call %q: arguments: %w", fc.Name, err))
		}
		args = b
	}
	tc := &ToolCall{ID: NewCallID(), Name: fc.Name, Arguments: string(args)}
	if len(p.ThoughtSignature) > 0 {
		tc.Signature, tc.SignedBy = base64.StdEncoding.EncodeToString(p.ThoughtSignature), SignedByGemini
	}
	delta := *tc
	s.pending = append(s.pending, Event{Kind: EventToolCallDelta, Index: len(s.calls), ToolCall: &delta})
	s.calls = append(s.calls, tc)
	return nil
}

// finished maps the finish reason: STOP is stop (tool_calls when the
// answer called functions), MAX_TOKENS length; a safety stop is a
// content-filter refusal; the rest are answers that cannot be used.
func (s *geminiStream) finished(reason genai.FinishReason) error {
	switch reason {
	case genai.FinishReasonStop:
		s.finish = FinishStop
		if len(s.calls) > 0 {
			s.finish = FinishToolCalls
		}
	case genai.FinishReasonMaxTokens:
		s.finish = FinishLength
	case genai.FinishReasonSafety, genai.FinishReasonRecitation, genai.FinishReasonBlocklist,
		genai.FinishReasonProhibitedContent, genai.FinishReasonSPII, genai.FinishReasonImageSafety,
		genai.FinishReasonImageProhibitedContent:
		return s.refused("the answer was stopped: " + string(reason))
	case genai.FinishReasonMalformedFunctionCall, genai.FinishReasonUnexpectedToolCall, genai.FinishReasonTooManyToolCalls:
		return s.invalid(fmt.Errorf("the answer ended with %s", reason))
	default:
		return &Error{Provider: s.provider, Code: UnknownProviderError, Err: fmt.Errorf("the answer ended with %s", reason)}
	}
	for _, tc := range s.calls {
		s.pending = append(s.pending, Event{Kind: EventToolCall, ToolCall: tc})
	}
	s.calls = nil
	return nil
}

// end is the stream closing cleanly. Gemini's stream has no end marker:
// the chunk with the finish reason is the end, so a stream that closes
// without one was cut short, and its usage is not the answer's.
func (s *geminiStream) end() error {
	switch {
	case s.finish == "":
		return s.invalid(errors.New("the stream ended without a finish reason"))
	case s.usage == nil:
		return s.invalid(errors.New("the stream ended without usage"))
	}
	s.cancel(errClosing)
	u := *s.usage
	u.Model = s.model
	s.pending = append(s.pending, Event{Kind: EventDone, Usage: &u, FinishReason: s.finish})
	return nil
}

func (s *geminiStream) invalid(err error) error {
	return &Error{Provider: s.provider, Code: ProviderInvalidResponse, Err: err}
}

func (s *geminiStream) refused(why string) error {
	return &Error{Provider: s.provider, Code: ProviderContentFilter, Err: errors.New(why)}
}

// Close cancels the call and releases the iterator; safe more than once
// and beside a Next in progress (the cancel ends its wait first).
func (s *geminiStream) Close() error {
	s.cancel(errClosing)
	s.timer.Stop()
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.closed = true
		s.stop()
	}
	return nil
}
