package anthropic

import (
	"context"
	"errors"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/voxgate/voxgate/sim/core"
	"github.com/voxgate/voxgate/sim/openai"
)

// Server serves Anthropic's Messages API over what the simulator
// shares and the Chat Completions engine it translates into.
type Server struct {
	env *core.Env
	oa  *openai.Server
	// org is what the organization was billed (orgcost.go).
	org orgBook
}

// New is the Messages surface over env and oa's engine.
func New(env *core.Env, oa *openai.Server) *Server { return &Server{env: env, oa: oa} }

// EndpointMessages is Anthropic's Messages API. The path is the
// one anthropic-sdk-go appends to its base URL, so ANTHROPIC_BASE_URL is
// the simulator's root (no /v1).
const EndpointMessages = "/v1/messages"

// anthVersions are the anthropic-version values the API takes; 2026-10-21
// is the one anthropic-sdk-go v2 sends.
var anthVersions = []string{"2026-10-21", "2023-06-01", "2023-01-01"}

// forcedToolUseRefusers are the models that answer a forced tool choice
// (tool_choice any or tool) with a 400 (models.md: Sonnet 5.5), by name or
// dated snapshot (claude-sonnet-5-5-20261001).
var forcedToolUseRefusers = regexp.MustCompile(`^claude-sonnet-5-5(-\d{8})?$`)

func refusesForcedToolUse(model string) bool { return forcedToolUseRefusers.MatchString(model) }

// forcesToolUse reports a tool_choice that makes the model call a tool.
func (r *messagesRequest) forcesToolUse() bool {
	return r.ToolChoice != nil && (r.ToolChoice.Type == "any" || r.ToolChoice.Type == "tool")
}

// forcedToolUseRefused is the refusal's message. The API's wording for
// this model is not published; this is the wording it gives the one
// documented refusal of forced tool use (with extended thinking on), on
// the assumption that Sonnet 5.5 refuses it because it always thinks
// (docs/sim.md).
const forcedToolUseRefused = "Thinking may not be enabled when tool_choice forces tool use."

// thinkingDisabledRefused is Sonnet 5.5's answer to thinking
// {"type": "disabled"} (models.md: the model always thinks, so turning it
// off is a 400). Its exact wording is not published. The models that
// refuse a forced tool choice are the ones that always think, so one
// pattern names both.
const thinkingDisabledRefused = "thinking.type: disabled is not supported for this model."

// FaultKinds are the faults /v1/messages can serve (docs/sim.md).
func FaultKinds() []core.FaultKind {
	return []core.FaultKind{core.FaultRateLimit, core.FaultQuota, core.FaultServerError, core.FaultUnavailable, core.FaultTimeout,
		core.FaultMalformedJSON, core.FaultCutStream, core.FaultSlowDrip, core.FaultStreamError,
		core.FaultContextLength, core.FaultContentFilter, core.FaultReset, core.FaultNoDone}
}

// Messages serves POST /v1/messages, answering every refusal in
// Anthropic's error shape.
func (s *Server) Messages(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Request-Id", "req_"+core.RandomID())
	err := s.serveMessages(w, r)
	var ae *anthError
	var oe *core.APIError
	switch {
	case err == nil, errors.Is(err, core.ErrClientGone), errors.Is(err, core.ErrServerClosed):
		return err
	case errors.As(err, &ae):
	case errors.As(err, &oe):
		ae = asAnthError(oe)
	default:
		s.env.Log.ErrorContext(r.Context(), "sim: request failed", "endpoint", EndpointMessages, "err", err)
		ae = anthServerError()
	}
	writeAnthError(w, ae)
	return nil
}

// serveMessages follows the real API's order: key, version, body, model;
// then any injected fault; then the scripted answer.
func (s *Server) serveMessages(w http.ResponseWriter, r *http.Request) error {
	start := time.Now()
	if err := s.checkKey(r); err != nil {
		return err
	}
	key := apiKey(r)
	switch v := r.Header.Get("Anthropic-Version"); {
	case v == "":
		return anthInvalid("anthropic-version: header is required")
	case !slices.Contains(anthVersions, v):
		return anthInvalid("anthropic-version: invalid version " + strconv.Quote(v))
	}
	body, err := s.env.ReadBody(w, r)
	if err != nil {
		return err
	}
	req, err := decodeMessagesRequest(body)
	if err != nil {
		return err
	}
	if s.oa.Models != nil && !s.oa.Models[req.Model] || s.oa.Life.Retired(req.Model, s.env.Now()) {
		return &anthError{Status: http.StatusNotFound, Type: "not_found_error", Message: "model: " + req.Model}
	}
	if req.forcesToolUse() && refusesForcedToolUse(req.Model) {
		return anthInvalid(forcedToolUseRefused)
	}
	if req.Thinking != nil && req.Thinking.Type == "disabled" && refusesForcedToolUse(req.Model) {
		return anthInvalid(thinkingDisabledRefused)
	}
	prefill, continues := req.prefill()
	if continues && refusesPrefill(req.Model) {
		return anthInvalid(prefillRefused)
	}
	if continues && strings.TrimRightFunc(prefill, unicode.IsSpace) != prefill {
		return anthInvalid(prefillEndsInSpace)
	}
	ctx := r.Context()
	chat := req.chat()
	prompt := openai.PromptTokens{Bytes: openai.PromptBytes(chat)}
	f := s.env.Faults.Take(EndpointMessages, req.Model)
	if f != nil {
		s.env.Stats.Fault(EndpointMessages, f.Kind)
		if handled, err := s.anthResponseFault(ctx, f, req.Stream, openai.TokensFor(prompt.Bytes)); handled {
			return err
		}
	}
	// Caching is explicit on this API: only a request that marks a
	// breakpoint (cache_control, top-level or on a block) reads or writes
	// the cache.
	if req.cacheMarks > 0 {
		prompt.Cached, prompt.Written = s.oa.Chat.Cache.CachedTokens(s.env.Now(), key, req.Model, chat, prompt.Bytes)
	}
	var ans openai.Answer
	if continues && prefill != "" {
		// An older model continues its reply: the answer goes on from
		// the prefill and never repeats it.
		ans = s.oa.Script.PlanContinued(chat, prefill)
	} else {
		ans = s.oa.Script.Plan(chat)
	}
	c := openai.NewCompletion(chat, ans, req.Model, prompt)
	a := newAnthAnswer(c, prompt)
	setAnthHeaders(w, start)
	if req.Stream {
		err = s.streamMessage(ctx, w, a, f)
	} else {
		err = s.writeMessage(ctx, w, a, f)
	}
	if err == nil && f == nil {
		// A Message served whole is billed; one a fault cut or shaped is
		// not, the simulator not knowing what the real API would bill.
		s.org.bill(anthBilled{at: s.env.Now(), model: req.Model, uncached: int64(a.input), read: int64(a.read),
			write5m: int64(a.write), out: int64(a.output)})
	}
	return err
}

// apiKey is the request's key: anthropic-sdk-go v2 sends it as
// Authorization: Bearer; v1 and curl examples send x-api-key. The API
// takes either.
func apiKey(r *http.Request) string {
	key := r.Header.Get("X-Api-Key")
	if bearer, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); key == "" && ok {
		key = bearer
	}
	return key
}

// checkKey refuses a request with no key, or one the simulator does not
// take.
func (s *Server) checkKey(r *http.Request) error {
	switch key := apiKey(r); {
	case key == "":
		return &anthError{Status: http.StatusUnauthorized, Type: "authentication_error", Message: "x-api-key header is required"}
	case len(s.env.Keys) > 0 && !s.env.Keys[key]:
		return &anthError{Status: http.StatusUnauthorized, Type: "authentication_error", Message: "invalid x-api-key"}
	}
	return nil
}

// anthResponseFault serves the faults that replace the whole response and
// reports false for those that shape the body instead.
func (s *Server) anthResponseFault(ctx context.Context, f *core.Fault, stream bool, promptTokens int) (bool, error) {
	switch f.Kind {
	case core.FaultRateLimit:
		return true, anthRateLimited(f.RetryAfter)
	case core.FaultQuota:
		return true, anthCreditTooLow()
	case core.FaultServerError:
		return true, anthServerError()
	case core.FaultUnavailable:
		return true, anthOverloaded(f.RetryAfter)
	case core.FaultContextLength:
		return true, anthPromptTooLong(promptTokens)
	case core.FaultReset:
		// Nothing written yet: aborting closes the connection before any
		// header, as a load balancer dropping the request does.
		panic(http.ErrAbortHandler)
	case core.FaultTimeout:
		if !stream || f.AfterChunks == 0 {
			return true, s.env.Hang(ctx)
		}
	case core.FaultStreamError:
		// A request that does not stream has no 200 to fail inside.
		if !stream {
			return true, anthOverloaded(0)
		}
	}
	return false, nil
}

// writeMessage sends a non-streamed Message after the time the model would
// take to generate it.
func (s *Server) writeMessage(ctx context.Context, w http.ResponseWriter, a *anthAnswer, f *core.Fault) error {
	kind := core.FaultKind("")
	if f != nil {
		kind = f.Kind
	}
	body := a.message(kind == core.FaultContentFilter)
	if kind != core.FaultSlowDrip {
		if err := s.env.Wait(ctx, s.oa.TTFT(a.model)+s.env.TokenDelay(a.output)); err != nil {
			return err
		}
	}
	return s.oa.WriteWhole(ctx, w, "application/json", body, f)
}
