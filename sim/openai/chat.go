package openai

import (
	"context"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/voxgate/voxgate/sim/core"
)

// EndpointChatCompletions is the endpoint name of POST /v1/chat/completions
// in faults and stats.
const EndpointChatCompletions = "/v1/chat/completions"

// ChatFaultKinds are the faults the chat endpoint can serve.
func ChatFaultKinds() []core.FaultKind {
	return []core.FaultKind{core.FaultRateLimit, core.FaultQuota, core.FaultServerError, core.FaultUnavailable, core.FaultTimeout,
		core.FaultMalformedJSON, core.FaultCutStream, core.FaultSlowDrip, core.FaultStreamError,
		core.FaultContextLength, core.FaultContentFilter, core.FaultReset, core.FaultNoDone, core.FaultSlowStart}
}

// Server is the Chat Completions surface and what the other surfaces
// borrow from it: the accepted models and their lifecycle, the script, the
// chat state, and the organization's bill.
type Server struct {
	env    *core.Env
	Models map[string]bool
	Life   Lifecycle
	Script *CompiledScript
	Chat   *ChatState
	Org    *OrgBook
}

// New builds the Chat Completions surface over env: models restricts
// the accepted models (empty: any), dates are the shutdown dates (nil: the
// defaults), chat its configuration.
func New(env *core.Env, script *CompiledScript, models []string, dates map[string]string, chat Chat) *Server {
	return &Server{env: env, Models: core.NameSet(models), Script: script, Org: newOrgBook(),
		Life: newLifecycle(models, dates, chat.ModelAliases), Chat: newChatState(models, chat)}
}

// ChatState is what Chat Completions keeps beyond the script: model names,
// each key's rate-limit usage and the prompt cache.
type ChatState struct {
	Models ChatModels
	rates  *rateBook
	Cache  *promptCache
	// continueFinal: Chat.ContinueFinalMessage.
	continueFinal bool
	// projectTier: Chat.ProjectServiceTier, "default" if unset.
	projectTier string
}

func newChatState(allowed []string, c Chat) *ChatState {
	tier := c.ProjectServiceTier
	if tier == "" {
		tier = "default"
	}
	return &ChatState{Models: NewChatModels(allowed, c), rates: newRateBook(c.RateLimits), Cache: newPromptCache(c.PromptCache),
		continueFinal: c.ContinueFinalMessage, projectTier: tier}
}

// ChatCompletions serves POST /v1/chat/completions in the real API's order:
// key, body, model; then any injected fault; then the scripted answer.
func (s *Server) ChatCompletions(w http.ResponseWriter, r *http.Request) error {
	start := time.Now()
	if err := s.env.Authorize(r); err != nil {
		return err
	}
	body, err := s.env.ReadBody(w, r)
	if err != nil {
		return err
	}
	body, cont, err := s.Chat.takeContinue(body)
	if err != nil {
		return err
	}
	req, err := decodeChatRequest(body)
	if err != nil {
		return err
	}
	if !s.Chat.Models.Accepts(req.Model) || s.Life.Retired(req.Model, s.env.Now()) {
		return core.ErrModelNotFound(req.Model)
	}
	if req.MaxTokens != nil && s.Chat.Models.IsReasoning(req.Model) {
		return core.ErrUnsupportedParam("max_tokens", "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.")
	}
	if err := s.Chat.Models.checkEffort(req); err != nil {
		return err
	}
	ctx := r.Context()
	key := core.Bearer(r)
	f := s.env.Faults.Take(EndpointChatCompletions, req.Model)
	if f != nil {
		s.env.Stats.Fault(EndpointChatCompletions, f.Kind)
		switch f.Kind {
		case core.FaultRateLimit:
			s.Chat.rates.exhausted(s.env.Now(), key).set(w.Header())
		case core.FaultReset:
			reset(w)
		case core.FaultContextLength:
			return core.ErrContextLength(req.Model)
		}
		if handled, err := s.ResponseFault(ctx, f, req.stream()); handled {
			return err
		}
	}
	model := s.Chat.Models.Snapshot(req.Model)
	prompt := PromptTokens{Bytes: PromptBytes(req)}
	prompt.Cached, prompt.Written = s.Chat.Cache.CachedTokens(s.env.Now(), key, model, req, prompt.Bytes)
	prompt.reportWrites = s.Chat.Models.billsCacheWrites(req.Model)
	var ans Answer
	if prefill, ok := PrefillOf(req); cont && ok {
		ans = s.Script.PlanContinued(req, prefill)
	} else {
		ans = s.Script.Plan(req)
	}
	c := NewCompletion(req, ans, model, prompt)
	c.ServiceTier = servedTier(req.ServiceTier, s.Chat.projectTier)
	setCommonHeaders(w, start)
	s.Chat.rates.charge(s.env.Now(), key, c.Usage.TotalTokens).set(w.Header())
	ttl, _ := req.cacheTTL()
	s.Org.Bill(s.env.Now(), c.Model, chatUsage(c.Usage, ttl, c.ServiceTier))
	if req.stream() {
		return s.streamCompletion(ctx, w, req, c, f)
	}
	return s.writeCompletion(ctx, w, c, f, s.TTFT(req.Model))
}

// ResponseFault serves the faults that replace the whole response. It
// reports false for faults that shape the body instead.
func (s *Server) ResponseFault(ctx context.Context, f *core.Fault, stream bool) (bool, error) {
	switch f.Kind {
	case core.FaultRateLimit:
		return true, core.ErrRateLimited(f.RetryAfter)
	case core.FaultQuota:
		return true, core.ErrQuotaExceeded()
	case core.FaultServerError:
		return true, core.ErrServer()
	case core.FaultUnavailable:
		return true, core.ErrUnavailable(f.RetryAfter)
	case core.FaultTimeout:
		if !stream || f.AfterChunks == 0 {
			return true, s.env.Hang(ctx)
		}
	case core.FaultStreamError:
		// A request that does not stream has no 200 to fail inside: the
		// failure is the whole answer.
		if !stream {
			return true, core.ErrServer()
		}
	case core.FaultContentFilter:
		// A stop after AfterChunks needs a stream to stop; otherwise the
		// prompt itself is refused.
		if !stream || f.AfterChunks == 0 {
			return true, core.ErrContentPolicy()
		}
	}
	return false, nil
}

// writeCompletion sends a non-streaming answer after the time the model
// would take to generate it.
func (s *Server) writeCompletion(ctx context.Context, w http.ResponseWriter, c *Completion, f *core.Fault, ttft time.Duration) error {
	body := c.marshal()
	if f != nil && f.Kind == core.FaultSlowStart {
		ttft = time.Duration(f.IntervalMS) * time.Millisecond
	}
	if f == nil || f.Kind != core.FaultSlowDrip {
		if err := s.env.Wait(ctx, ttft+s.env.TokenDelay(c.Usage.CompletionTokens)); err != nil {
			return err
		}
	}
	return s.WriteWhole(ctx, w, "application/json", body, f)
}

// reset drops the connection before any response header, as a load
// balancer that gives up on a request does: over HTTP/1.1 the socket is
// closed with a TCP reset (linger 0), so the client reads ECONNRESET rather
// than a tidy end of file; over HTTP/2, which cannot be hijacked, the
// aborted handler resets the stream.
func reset(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	if tcp, ok := conn.(*net.TCPConn); ok {
		_ = tcp.SetLinger(0)
	}
	_ = conn.Close()
	panic(http.ErrAbortHandler)
}

// Malformed breaks a JSON object with a syntax error near its start (an
// empty member value), so the client fails to parse it. A truncated body
// would look like a cut connection instead.
func Malformed(obj []byte) []byte {
	out := make([]byte, 0, len(obj)+8)
	out = append(out, '{')
	out = append(out, `"sim":,`...)
	return append(out, obj[1:]...)
}

// dripPieces is how many parts a slow-dripped non-streaming body is sent in.
const dripPieces = 8

// drip sends body in dripPieces parts, interval apart, the first after one
// interval.
func (s *Server) drip(ctx context.Context, w http.ResponseWriter, body []byte, interval time.Duration) error {
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	rc := http.NewResponseController(w)
	size := (len(body) + dripPieces - 1) / dripPieces
	for off := 0; off < len(body); off += size {
		if err := s.env.Wait(ctx, interval); err != nil {
			return err
		}
		end := min(off+size, len(body))
		if _, err := w.Write(body[off:end]); err != nil {
			return core.ErrClientGone
		}
		if err := rc.Flush(); err != nil {
			return core.ErrClientGone
		}
	}
	return nil
}

// setCommonHeaders adds the headers the real API sends on every answer it
// generates (x-request-id is set for every answer, errors included, by
// Server.endpoint).
func setCommonHeaders(w http.ResponseWriter, start time.Time) {
	h := w.Header()
	h.Set("Openai-Processing-Ms", strconv.FormatInt(time.Since(start).Milliseconds(), 10))
	h.Set("Openai-Version", "2020-10-01")
}

// WriteWhole sends a non-streaming answer's body, shaped by the body
// faults every chat surface serves alike: malformed JSON, a body cut
// halfway (the whole length promised, half sent, then the connection
// dropped: the client sees an unexpected EOF), or a slow drip.
func (s *Server) WriteWhole(ctx context.Context, w http.ResponseWriter, contentType string, body []byte, f *core.Fault) error {
	h := w.Header()
	h.Set("Content-Type", contentType)
	kind := core.FaultKind("")
	if f != nil {
		kind = f.Kind
	}
	switch kind {
	case core.FaultMalformedJSON:
		body = Malformed(body)
	case core.FaultCutStream:
		h.Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(body[:len(body)/2])
		_ = http.NewResponseController(w).Flush()
		panic(http.ErrAbortHandler)
	case core.FaultSlowDrip:
		return s.drip(ctx, w, body, time.Duration(f.IntervalMS)*time.Millisecond)
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	if _, err := w.Write(body); err != nil {
		return core.ErrClientGone
	}
	return nil
}
