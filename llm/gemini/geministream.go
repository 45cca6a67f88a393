package gemini

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"google.golang.org/genai"

	"github.com/voxgate/voxgate/internal/modelname"
	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/llm/adapt"
)

// geminiDecoder reads genai's chunk iterator one chunk at a time
// (iter.Pull2) and turns each into events. Gemini sends each function call
// whole, so a call is announced at once with one EventToolCallDelta
// carrying all of it, and released as an EventToolCall only when the
// finish reason arrives: a call from a stream that fails before its end is
// never run.
type geminiDecoder struct {
	*adapt.Emitter
	wire   *wireSeen
	pull   func() (*genai.GenerateContentResponse, error, bool) // iter.Pull2's next
	stop   func()
	cur    *genai.GenerateContentResponse // the chunk next read
	calls  []*llm.ToolCall
	finish string
	usage  *llm.Usage
	model  string
	ctx    context.Context // the call's, for the log
	asked  string          // the model the request named

	// oneCall keeps only an answer's first function call: Gemini has no
	// parallel_tool_calls, so the gateway holds the answer to it.
	oneCall bool
}

func (s *geminiDecoder) Take() error { return s.chunk(s.cur) }

func (s *geminiDecoder) Classify(err error) *llm.Error {
	return classifyGemini(s.Provider, err, s.wire)
}

func (s *geminiDecoder) Close() { s.stop() }

// reported is the usageMetadata of the chunk with the finish reason: the
// counts of earlier chunks are the call's so far.
func (s *geminiDecoder) Reported() *llm.Usage {
	if s.finish == "" {
		return nil
	}
	return adapt.WithModel(s.usage, s.model)
}

// errUndecodable is a chunk genai could not convert: its converters
// assert the JSON's types and panic on a mismatch (a "candidates" object
// where a list belongs), which a broken or hostile upstream must not turn
// into a crash.
var errUndecodable = errors.New("genai could not decode a chunk")

// next is pull, with genai's panic on an undecodable chunk made an error
// (iter.Pull2 re-raises the iterator's panic in the caller; the iterator
// is finished after it).
func (s *geminiDecoder) Next() (ok bool, err error) {
	defer func() {
		if v := recover(); v != nil {
			s.cur, ok, err = nil, false, fmt.Errorf("%w: %v", errUndecodable, v)
		}
	}()
	s.cur, err, ok = s.pull()
	if err != nil {
		return false, err
	}
	return ok, nil
}

// chunk turns one chunk into events.
func (s *geminiDecoder) chunk(r *genai.GenerateContentResponse) error {
	if r == nil {
		return s.Invalid(errors.New("an empty chunk"))
	}
	if r.ModelVersion != "" && r.ModelVersion != s.model {
		s.model = r.ModelVersion
		s.warnRerouted()
	}
	if u := r.UsageMetadata; u != nil {
		s.usage = &llm.Usage{
			InputTokens:       int64(u.PromptTokenCount), // cached tokens are part of it
			CachedInputTokens: int64(u.CachedContentTokenCount),
			OutputTokens:      int64(u.CandidatesTokenCount) + int64(u.ThoughtsTokenCount),
		}
	}
	if pf := r.PromptFeedback; pf != nil && pf.BlockReason != "" {
		return s.Refused(errors.New("the prompt was blocked: "+string(pf.BlockReason)), adapt.WithModel(s.usage, s.model))
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

func (s *geminiDecoder) part(p *genai.Part) error {
	if p == nil || p.Thought { // thought summaries are not part of the answer
		return nil
	}
	if s.finish != "" && (p.Text != "" || p.FunctionCall != nil) {
		return s.Invalid(errors.New("content after the finish reason"))
	}
	if p.Text != "" {
		s.Emit(llm.Event{Kind: llm.EventText, Text: p.Text})
	}
	fc := p.FunctionCall
	if fc == nil {
		return nil
	}
	if fc.Name == "" {
		return s.Invalid(fmt.Errorf("function call %d has no name", len(s.calls)))
	}
	if s.oneCall && len(s.calls) > 0 {
		return nil
	}
	args := []byte("{}")
	if fc.Args != nil {
		b, err := json.Marshal(fc.Args)
		if err != nil {
			return s.Invalid(fmt.Errorf("function call %q: arguments: %w", fc.Name, err))
		}
		args = b
	}
	tc := &llm.ToolCall{ID: llm.NewCallID(), Name: fc.Name, Arguments: string(args)}
	if len(p.ThoughtSignature) > 0 {
		tc.Signature, tc.SignedBy = base64.StdEncoding.EncodeToString(p.ThoughtSignature), SignedByGemini
	}
	delta := *tc
	s.Emit(llm.Event{Kind: llm.EventToolCallDelta, Index: len(s.calls), ToolCall: &delta})
	s.calls = append(s.calls, tc)
	return nil
}

// finished maps the finish reason: STOP is stop (tool_calls when the
// answer called functions), MAX_TOKENS length; a safety stop is a
// content-filter refusal, with the usage reported so far (the stopped
// answer may be billed); the rest are answers that cannot be used.
func (s *geminiDecoder) finished(reason genai.FinishReason) error {
	switch reason {
	case genai.FinishReasonStop:
		s.finish = llm.FinishStop
		if len(s.calls) > 0 {
			s.finish = llm.FinishToolCalls
		}
	case genai.FinishReasonMaxTokens:
		s.finish = llm.FinishLength
	case genai.FinishReasonSafety, genai.FinishReasonRecitation, genai.FinishReasonBlocklist,
		genai.FinishReasonProhibitedContent, genai.FinishReasonSPII, genai.FinishReasonImageSafety,
		genai.FinishReasonImageProhibitedContent:
		return s.Refused(errors.New("the answer was stopped: "+string(reason)), adapt.WithModel(s.usage, s.model))
	case genai.FinishReasonMalformedFunctionCall, genai.FinishReasonUnexpectedToolCall, genai.FinishReasonTooManyToolCalls:
		return s.Invalid(fmt.Errorf("the answer ended with %s", reason))
	default:
		return &llm.Error{Provider: s.Provider, Code: llm.UnknownProviderError, Err: fmt.Errorf("the answer ended with %s", reason)}
	}
	for _, tc := range s.calls {
		s.Emit(llm.Event{Kind: llm.EventToolCall, ToolCall: tc})
	}
	s.calls = nil
	return nil
}

// end is the stream closing cleanly. Gemini's stream has no end marker:
// the chunk with the finish reason is the end, so a stream that closes
// without one was cut short, and its usage is not the answer's
// (emitter.done).
func (s *geminiDecoder) End() error {
	return s.Done(s.finish, s.usage, s.model)
}

// warnRerouted logs, once a call, that Google answered with another model
// than the one asked: it re-routes retired models silently and bills the
// new model's rates, which is what the record then names and is priced by.
// A version of the model asked (modelname.Rerouted) is not another.
func (s *geminiDecoder) warnRerouted() {
	if !modelname.Rerouted(s.asked, s.model) || s.ctx == nil {
		return
	}
	slog.WarnContext(s.ctx, "llm: gemini answered with another model than configured; priced and recorded as the one that answered",
		"provider", s.Provider, "configured", s.asked, "answered", s.model)
	s.asked = s.model // once
}
