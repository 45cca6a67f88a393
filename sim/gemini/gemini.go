package gemini

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/voxgate/voxgate/sim/core"
	"github.com/voxgate/voxgate/sim/openai"
)

// Server serves the Gemini API's generateContent over what the simulator
// shares and the Chat Completions engine it translates into.
type Server struct {
	env    *core.Env
	oa     *openai.Server
	stores storeBook
}

// New is the generateContent surface over env and oa's engine.
func New(env *core.Env, oa *openai.Server) *Server { return &Server{env: env, oa: oa} }

// The Gemini API's generateContent, as google.golang.org/genai calls it
// with the Gemini API backend and HTTPOptions.BaseURL (or
// GOOGLE_GEMINI_BASE_URL) pointing here: POST {base}/v1beta/models/
// {model}:generateContent, or :streamGenerateContent?alt=sse, the key in
// x-goog-api-key. Requests are translated into a openai.ChatRequest so the same
// script, token counts, prompt cache and faults drive it (docs/sim.md).
const (
	EndpointGenerate = "/v1beta/models/{model}:generateContent"
	EndpointStream   = "/v1beta/models/{model}:streamGenerateContent"
	// Route is the pattern both are served under: ServeMux wildcards
	// take whole segments, and the method follows the model in one.
	Route = "POST /v1beta/models/{call}"
)

// FaultKinds are the faults each Gemini endpoint can serve. Gemini
// has no insufficient_quota of its own (an exhausted quota is a 429 like
// any rate limit), and no_done needs a stream.
func FaultKinds() map[string][]core.FaultKind {
	common := []core.FaultKind{core.FaultRateLimit, core.FaultServerError, core.FaultUnavailable, core.FaultTimeout, core.FaultMalformedJSON,
		core.FaultCutStream, core.FaultSlowDrip, core.FaultStreamError, core.FaultContextLength, core.FaultContentFilter, core.FaultReset}
	return map[string][]core.FaultKind{
		EndpointGenerate: common,
		EndpointStream:   append(common[:len(common):len(common)], core.FaultNoDone),
	}
}

// Handler routes a call to its method's endpoint, each with its own
// counters and faults.
func (s *Server) Handler() http.Handler {
	generate := s.env.Endpoint(EndpointGenerate, s.geminiMethod(false))
	stream := s.env.Endpoint(EndpointStream, s.geminiMethod(true))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, method, _ := cutLast(r.PathValue("call"), ":")
		switch method {
		case "generateContent":
			generate.ServeHTTP(w, r)
		case "streamGenerateContent":
			stream.ServeHTTP(w, r)
		default:
			writeGeminiError(w, gemMethodNotFound(r.URL.Path))
		}
	})
}

func cutLast(s, sep string) (before, after string, found bool) {
	if i := strings.LastIndex(s, sep); i >= 0 {
		return s[:i], s[i+len(sep):], true
	}
	return s, "", false
}

// geminiMethod adapts serveGemini to Server.endpoint: Gemini's errors are
// written here in Gemini's shape, so endpoint only sees the errors that
// mean no one is to be answered.
func (s *Server) geminiMethod(stream bool) core.Handler {
	return func(w http.ResponseWriter, r *http.Request) error {
		err := s.serveGemini(w, r, stream)
		var ge *geminiError
		switch {
		case err == nil, errors.Is(err, core.ErrClientGone), errors.Is(err, core.ErrServerClosed):
			return err
		case errors.As(err, &ge):
			writeGeminiError(w, ge)
		default:
			s.env.Log.ErrorContext(r.Context(), "sim: gemini request failed", "err", err)
			writeGeminiError(w, gemInternal())
		}
		return nil
	}
}

// serveGemini answers in the real API's order: key, body, model; then any
// injected fault; then the scripted answer.
func (s *Server) serveGemini(w http.ResponseWriter, r *http.Request, stream bool) error {
	model, _, _ := cutLast(r.PathValue("call"), ":")
	model = strings.TrimPrefix(model, "models/")
	if err := s.geminiKey(r); err != nil {
		return err
	}
	if stream && r.URL.Query().Get("alt") != "sse" {
		return gemInvalid("The simulator streams only as server-sent events: add alt=sse.")
	}
	body, err := s.env.ReadBody(w, r)
	var tooBig *core.APIError
	if errors.As(err, &tooBig) {
		return gemTooLarge(s.env.MaxBody)
	} else if err != nil {
		return err
	}
	method := "generateContent"
	if stream {
		method = "streamGenerateContent"
	}
	if model == "" || !s.oa.Chat.Models.Accepts(model) || s.oa.Life.Retired(model, s.env.Now()) {
		return gemModelNotFound(model, method)
	}
	// A re-routed model answers under its target's rules and as it.
	model = answeringModel(model, s.env.Now())
	req, store, err := decodeGeminiRequest(model, body, stream, geminiSigns(model))
	if err != nil {
		return err
	}
	s.stores.note(store)
	endpoint := EndpointGenerate
	if stream {
		endpoint = EndpointStream
	}
	ctx := r.Context()
	f := s.env.Faults.Take(endpoint, model)
	if f != nil {
		s.env.Stats.Fault(endpoint, f.Kind)
		if handled, err := s.geminiFault(ctx, f, req, stream); handled {
			return err
		}
	}
	prompt := openai.PromptTokens{Bytes: openai.PromptBytes(req)}
	prompt.Cached, _ = s.oa.Chat.Cache.CachedTokens(s.env.Now(), geminiKeyOf(r), model, req, prompt.Bytes)
	g := newGeminiAnswer(req, s.oa.Script.Plan(req), model, prompt)
	if stream {
		return s.streamGemini(ctx, w, g, f)
	}
	return s.writeGemini(ctx, w, g, f)
}

// geminiFault serves the faults that replace the whole answer, and reports
// false for those that shape it.
func (s *Server) geminiFault(ctx context.Context, f *core.Fault, req *openai.ChatRequest, stream bool) (bool, error) {
	switch f.Kind {
	case core.FaultRateLimit:
		return true, gemRateLimited(f.RetryAfter)
	case core.FaultServerError:
		return true, gemInternal()
	case core.FaultUnavailable:
		return true, gemUnavailable(f.RetryAfter)
	case core.FaultContextLength:
		return true, gemContextLength(openai.TokensFor(openai.PromptBytes(req)))
	case core.FaultReset:
		// No status line, no headers: the connection just closes, as when
		// a load balancer drops the request.
		panic(http.ErrAbortHandler)
	case core.FaultTimeout:
		if !stream || f.AfterChunks == 0 {
			return true, s.env.Hang(ctx)
		}
	case core.FaultStreamError:
		if !stream {
			return true, gemInternal()
		}
	}
	return false, nil
}

// geminiKey checks the API key, which genai sends as x-goog-api-key (the
// REST API also takes ?key=).
func (s *Server) geminiKey(r *http.Request) error {
	key := geminiKeyOf(r)
	switch {
	case key == "":
		return gemNoKey()
	case len(s.env.Keys) > 0 && !s.env.Keys[key]:
		return gemBadKey()
	}
	return nil
}

func geminiKeyOf(r *http.Request) string {
	if k := strings.TrimSpace(r.Header.Get("X-Goog-Api-Key")); k != "" {
		return k
	}
	return r.URL.Query().Get("key")
}

// geminiThinks reports whether a model thinks before it answers, and so
// reports thoughtsTokenCount: the 2.5 Pro and Flash models and every
// Gemini 3 model except the Lite ones, which think only when asked.
func geminiThinks(model string) bool {
	if strings.Contains(model, "-lite") {
		return false
	}
	return strings.HasPrefix(model, "gemini-3") || strings.HasPrefix(model, "gemini-2.5-pro") ||
		strings.HasPrefix(model, "gemini-2.5-flash") || strings.Contains(model, "-pro")
}

// geminiSigns reports whether a model signs its function calls and refuses
// a history whose calls in the current turn lack their signatures: Gemini
// 3's thinking models (2.5 signs too, but does not check).
func geminiSigns(model string) bool {
	return geminiThinks(model) && strings.HasPrefix(model, "gemini-3")
}
