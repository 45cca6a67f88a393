package gemini

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"time"

	"google.golang.org/genai"

	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/llm/adapt"
)

// SignedByGemini is ToolCall.SignedBy for calls a Gemini model signed.
const SignedByGemini = "gemini"

// Params configures a Gemini provider.
type Params struct {
	// Name is the provider's configured name, as traces and records show
	// it. Empty means "gemini".
	Name string
	// BaseURL replaces the Gemini API's host; empty leaves genai's own
	// choice (GOOGLE_GEMINI_BASE_URL, else Google's endpoint).
	BaseURL string
	APIKey  string
	// HTTPClient sends the calls; nil means one on NewTransport.
	HTTPClient *http.Client
	// Timeout bounds the wait for the first chunk and for each next one
	// while the caller waits in Next. Zero means DefaultTimeout.
	Timeout time.Duration
	// FirstChunk replaces Timeout for the first chunk of the models it
	// names (a family covers its snapshots).
	FirstChunk map[string]time.Duration
	// Store lets the Gemini API keep the requests (it does, for new paid
	// projects, unless store is false). False, the default, sends
	// store: false on every request.
	Store bool
}

// Gemini streams generateContent through google.golang.org/genai with the
// Gemini API backend. The SDK's HTTP retries and its automatic stream
// continuation are off: retrying is the router's job.
type Gemini struct {
	adapt.Waits
	name   string
	client *genai.Client
	store  bool
}

var _ llm.Provider = (*Gemini)(nil)

// NewGemini checks p and builds the provider.
func New(ctx context.Context, p Params) (*Gemini, error) {
	if p.APIKey == "" {
		return nil, errors.New("llm: gemini: APIKey is required")
	}
	w, err := adapt.NewWaits("gemini", p.Timeout, p.FirstChunk)
	if err != nil {
		return nil, err
	}
	hc := &http.Client{Transport: llm.NewTransport()}
	if p.HTTPClient != nil {
		c := *p.HTTPClient
		hc = &c
	}
	base := hc.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	hc.Transport = wireRecorder{base: base}
	client, err := genai.NewClient(ctx, &genai.ClientConfig{
		APIKey:     p.APIKey,
		Backend:    genai.BackendGeminiAPI,
		HTTPClient: hc,
		HTTPOptions: genai.HTTPOptions{
			BaseURL: p.BaseURL,
			// One attempt: the SDK retries only when RetryOptions is set,
			// and saying so keeps it off should that default change.
			RetryOptions: &genai.HTTPRetryOptions{Attempts: genai.Ptr[int32](1)},
		},
	})
	if err != nil {
		return nil, fmt.Errorf("llm: gemini: %w", err)
	}
	g := &Gemini{Waits: w, name: p.Name, client: client, store: p.Store}
	if g.name == "" {
		g.name = "gemini"
	}
	return g, nil
}

// Name is the provider's configured name.
func (g *Gemini) Name() string { return g.name }

// Unhonoured names a continuation (Request.Continue), a strict tool and a
// strict response format's keyword Gemini ignores: Gemini cannot continue
// a partial answer, and its function declarations have no strict mode, so
// nothing would hold the arguments to the schema.
// parallel_tool_calls: false it honours, by keeping one call an answer.
func (g *Gemini) Unhonoured(req llm.Request) string {
	if req.Continue {
		// generateContent has no way to be asked to continue a partial
		// answer: a trailing model turn is answered anew, and an answer
		// begun again would repeat what the caller has. Config refuses
		// continue: prefill on a gemini provider; a router built without
		// config passes it over here.
		return "continue"
	}
	for i, t := range req.Tools {
		if t.Strict {
			return fmt.Sprintf("tools[%d].function.strict", i)
		}
	}
	// A strict schema with a keyword Gemini ignores (format.go).
	return formatUnhonoured(req.ResponseFormat)
}

// Stream starts a streamed generateContent call and waits for its first
// chunk, so a refusal or a silent upstream is an error here, where the
// router may still fail over.
func (g *Gemini) Stream(ctx context.Context, req llm.Request) (llm.Stream, error) {
	contents, cfg, err := geminiRequest(req)
	if err != nil {
		return nil, &llm.Error{Provider: g.name, Code: llm.UnknownProviderError, Err: fmt.Errorf("request: %w", err)}
	}
	cfg.Store = genai.Ptr(g.store)
	s := adapt.NewCore(ctx, g.name, g.Waits, req.Model)
	d := &geminiDecoder{Emitter: &s.Emitter, wire: &wireSeen{}, oneCall: req.OneCall() && len(req.Tools) > 0,
		ctx: ctx, asked: req.Model}
	callCtx := context.WithValue(s.Upstream(), wireKey{}, d.wire)
	d.pull, d.stop = iter.Pull2(g.client.Models.GenerateContentStream(callCtx, req.Model, contents, cfg))
	return s.Start(d)
}

// wireSeen is what the transport saw of a call's HTTP answer: the status
// tells an HTTP refusal from an error event inside a 200 stream, which
// genai reports alike.
type wireSeen struct {
	status int
	header http.Header
}

type wireKey struct{}

// wireRecorder notes each answer's status in the request's wireSeen.
type wireRecorder struct{ base http.RoundTripper }

func (t wireRecorder) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(r)
	if seen, ok := r.Context().Value(wireKey{}).(*wireSeen); ok && resp != nil {
		seen.status, seen.header = resp.StatusCode, resp.Header
	}
	return resp, err
}
