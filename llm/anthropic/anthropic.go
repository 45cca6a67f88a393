package anthropic

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/ssestream"

	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/llm/adapt"
)

// DefaultAnthropicMaxTokens is max_tokens when neither the request nor the
// provider's config sets it: the Messages API requires one.
const DefaultAnthropicMaxTokens = 4096

// Params configure an Anthropic provider.
type Params struct {
	// Name is the provider's name in config, traces and records.
	Name string
	// BaseURL is the API root (ANTHROPIC_BASE_URL), e.g.
	// https://api.anthropic.com or the simulator's http://127.0.0.1:PORT:
	// the SDK appends v1/messages itself.
	BaseURL string
	// APIKey is the server's key (ANTHROPIC_API_KEY), sent as x-api-key.
	APIKey string
	// HTTPClient, when set, carries the requests; the default is a client
	// on NewTransport.
	HTTPClient *http.Client
	// Timeout and FirstChunk bound the waits as OpenAIParams' do.
	Timeout    time.Duration
	FirstChunk map[string]time.Duration
	// MaxTokens is max_tokens for requests that set no MaxOutputTokens;
	// zero means DefaultAnthropicMaxTokens.
	MaxTokens int
	// NoPromptCache leaves out the request's cache_control breakpoint, so
	// Anthropic neither writes nor reads its prompt cache (docs/llm.md).
	NoPromptCache bool
}

// Anthropic streams Messages through anthropic-sdk-go, one request per
// call: retries and failover belong to the router behind Provider.
type Anthropic struct {
	adapt.Waits
	name      string
	client    anthropic.Client
	maxTokens int
	cache     bool
}

var _ llm.Provider = (*Anthropic)(nil)

// NewAnthropic checks p and builds the provider.
func New(p Params) (*Anthropic, error) {
	switch {
	case p.Name == "":
		return nil, errors.New("llm: anthropic: a provider name is required")
	case p.BaseURL == "" || p.APIKey == "":
		return nil, fmt.Errorf("llm: %s: BaseURL and APIKey are required", p.Name)
	case !strings.HasPrefix(p.BaseURL, "https://") && !strings.HasPrefix(p.BaseURL, "http://"):
		return nil, fmt.Errorf("llm: %s: base URL %q is not http(s)", p.Name, p.BaseURL)
	case p.MaxTokens < 0:
		return nil, fmt.Errorf("llm: %s: max tokens must not be negative", p.Name)
	}
	w, err := adapt.NewWaits(p.Name, p.Timeout, p.FirstChunk)
	if err != nil {
		return nil, err
	}
	client := p.HTTPClient
	if client == nil {
		client = &http.Client{Transport: llm.NewTransport()}
	}
	a := &Anthropic{Waits: w, name: p.Name, maxTokens: p.MaxTokens, cache: !p.NoPromptCache}
	if a.maxTokens == 0 {
		a.maxTokens = DefaultAnthropicMaxTokens
	}
	// WithoutEnvironmentDefaults keeps the SDK from reading ANTHROPIC_*
	// variables or credential profiles itself: config decides both.
	a.client = anthropic.NewClient(
		option.WithoutEnvironmentDefaults(),
		option.WithBaseURL(strings.TrimRight(p.BaseURL, "/")+"/"),
		option.WithAPIKey(p.APIKey),
		option.WithMaxRetries(0),
		option.WithHTTPClient(client),
	)
	return a, nil
}

// Name is the provider's configured name.
func (a *Anthropic) Name() string { return a.name }

// Unhonoured names what of a response format the model cannot be held to
// (formatUnhonoured): JSON mode, a model without structured outputs, a
// schema keyword the API does not take. A JSON answer asked and not held
// to is worse than a refusal (docs/llm.md, "Structured outputs").
func (a *Anthropic) Unhonoured(req llm.Request) string {
	if req.Continue && req.ResponseFormat != nil {
		// The format's grammar holds what the model writes, from its
		// start: continuing a partial JSON answer would begin the value
		// anew after it, and the whole would be no JSON at all.
		return "continue"
	}
	return formatUnhonoured(req.Model, req.ResponseFormat)
}

// Stream starts a streamed Message and waits for its first event, so that
// every failure before it is returned here, where the router may still
// fail over. The call runs under ctx until the stream is closed.
func (a *Anthropic) Stream(ctx context.Context, req llm.Request) (llm.Stream, error) {
	params, err := a.messageParams(req)
	if err != nil {
		return nil, &llm.Error{Provider: a.name, Code: llm.UnknownProviderError, Err: err}
	}
	body, err := adapt.EncodeWith(params.MarshalJSON)
	if err != nil {
		return nil, &llm.Error{Provider: a.name, Code: llm.UnknownProviderError, Err: err}
	}
	s := adapt.NewCore(ctx, a.name, a.Waits, req.Model)
	// NewStreaming's request with the body encoded on its own goroutine
	// (see encodeWith): the same path, headers and "stream": true.
	var raw *http.Response
	err = a.client.Post(s.Upstream(), "v1/messages", nil, &raw,
		option.WithRequestBody("application/json", body), option.WithJSONSet("stream", true))
	return s.Start(&anthDecoder{Emitter: &s.Emitter, calls: map[int64]*anthCall{},
		sse: ssestream.NewStream[anthropic.MessageStreamEventUnion](ssestream.NewDecoder(raw), err)})
}
