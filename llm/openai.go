package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/shared"

	"github.com/voxgate/voxgate/internal/modelname"
)

// DefaultTimeout bounds the wait for a provider's first event, and for
// each event after it (DESIGN §11: 10 s per provider).
const DefaultTimeout = 10 * time.Second

// DefaultReasoningFirstChunk bounds the wait for a reasoning model's first
// chunk: such a model is silent while it reasons, for 30 s or more at high
// effort, and DefaultTimeout would cut healthy turns.
const DefaultReasoningFirstChunk = 60 * time.Second

// OpenAIParams configure an OpenAI provider.
type OpenAIParams struct {
	// BaseURL is the API base (OPENAI_BASE_URL), e.g.
	// https://api.openai.com/v1, or the simulator's http://127.0.0.1:PORT/v1.
	BaseURL string
	// APIKey is the server's key (OPENAI_API_KEY). It never leaves the
	// gateway.
	APIKey string
	// HTTPClient, when set, carries the requests (tests, proxies); the
	// default is a client on NewTransport.
	HTTPClient *http.Client
	// Timeout bounds the wait for the first event of a call, and then for
	// each next chunk while the caller waits on Next; zero means
	// DefaultTimeout.
	Timeout time.Duration
	// FirstChunk replaces Timeout for the first chunk of the models it
	// names (a family covers its dated snapshots): reasoning models think
	// before they answer (DefaultFirstChunkTimeouts).
	FirstChunk map[string]time.Duration
}

// OpenAI streams Chat Completions through openai-go. It sends one request
// per call: retries and failover belong to the router behind Provider.
type OpenAI struct {
	client     openai.Client
	timeout    time.Duration
	firstChunk map[string]time.Duration
}

var _ Provider = (*OpenAI)(nil)

// NewOpenAI checks p and builds the provider.
func NewOpenAI(p OpenAIParams) (*OpenAI, error) {
	if p.BaseURL == "" || p.APIKey == "" {
		return nil, errors.New("llm: openai: BaseURL and APIKey are required")
	}
	if !strings.HasPrefix(p.BaseURL, "https://") && !strings.HasPrefix(p.BaseURL, "http://") {
		return nil, fmt.Errorf("llm: openai: base URL %q is not http(s)", p.BaseURL)
	}
	if p.Timeout < 0 {
		return nil, fmt.Errorf("llm: openai: timeout must not be negative, got %s", p.Timeout)
	}
	for m, d := range p.FirstChunk {
		if m == "" || d <= 0 {
			return nil, fmt.Errorf("llm: openai: first-chunk timeout of %q must be positive, got %s", m, d)
		}
	}
	opts := []option.RequestOption{
		option.WithBaseURL(strings.TrimRight(p.BaseURL, "/") + "/"),
		option.WithAPIKey(p.APIKey),
		option.WithMaxRetries(0),
	}
	client := p.HTTPClient
	if client == nil {
		client = &http.Client{Transport: NewTransport()}
	}
	opts = append(opts, option.WithHTTPClient(client))
	timeout := p.Timeout
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	return &OpenAI{client: openai.NewClient(opts...), timeout: timeout, firstChunk: p.FirstChunk}, nil
}

// FirstChunkTimeout is how long a call to model waits for its first chunk.
func (o *OpenAI) FirstChunkTimeout(model string) time.Duration {
	if d, ok := modelname.Lookup(o.firstChunk, model); ok {
		return d
	}
	return o.timeout
}

// NewTransport is the provider calls' own transport: the default one with
// room for many streams at once. Over HTTP/1.1 every stream in flight holds
// a connection, so a pool of the default two idle connections would close
// and redial most of them under load; and a held stream's connection keeps
// its read and write buffers for as long as the model takes, so they are
// sized for server-sent events (small chunks) rather than bulk transfer.
// Over HTTP/2 (the real API, through TLS) streams share connections and
// the buffers are the HTTP/2 framer's. A caller that brings its own
// HTTPClient (a proxy, a private CA) may start from it.
func NewTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = 0 // no limit across hosts; per host below
	t.MaxIdleConnsPerHost = 256
	t.ReadBufferSize = 1 << 10
	t.WriteBufferSize = 1 << 10
	return t
}

// Name is "openai".
func (o *OpenAI) Name() string { return "openai" }

// Stream starts a streamed Chat Completion and waits for its first chunk,
// so that every failure before the first event (a refusal, a timeout, a
// dropped connection, an unreadable first chunk) is returned here, where
// the router may still fail over. The call runs under ctx until the stream
// is closed: ending ctx cancels it.
func (o *OpenAI) Stream(ctx context.Context, req Request) (Stream, error) {
	params, err := chatParams(req)
	if err != nil {
		return nil, &Error{Provider: o.Name(), Code: UnknownProviderError, Err: err}
	}
	body, err := encode(params)
	if err != nil {
		return nil, &Error{Provider: o.Name(), Code: UnknownProviderError, Err: err}
	}
	upstream, cancel := context.WithCancelCause(ctx)
	s := &openaiStream{provider: o.Name(), caller: ctx, upstream: upstream, cancel: cancel, timeout: o.timeout}
	s.timer = time.AfterFunc(o.FirstChunkTimeout(req.Model), func() { cancel(errTimedOut) })
	// NewStreaming's request, its parameters already encoded (see encode):
	// the same path, headers and body, "stream": true set the same way.
	// NewStreaming itself would encode its parameters argument here, on
	// this goroutine; even an empty one, behind production's middleware,
	// took the stack past 16 KiB.
	var raw *http.Response
	err = o.client.Post(upstream, "chat/completions", nil, &raw,
		option.WithRequestBody("application/json", body), option.WithJSONSet("stream", true))
	s.sse = ssestream.NewStream[openai.ChatCompletionChunk](ssestream.NewDecoder(raw), err)
	if err := s.first(); err != nil {
		_ = s.Close()
		return nil, err
	}
	return s, nil
}

// encode is openai-go's own encoding of p, run on a goroutine of its own.
// The encoder recurses through reflection past 16 KiB of stack, and a
// goroutine's stack only halves while less than a quarter of it is in
// use: encoded on the caller's goroutine, which then waits on the model
// for as long as the stream lasts, every open stream would hold a 32 KiB
// stack where 16 KiB do (docs/chat.md, "Idle streams"). It stays, rather
// than plain NewStreaming, because the 64 KB-per-idle-stream target fails
// without it.
func encode(p *openai.ChatCompletionNewParams) (body []byte, err error) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() {
			if v := recover(); v != nil {
				err = fmt.Errorf("request: encoding panicked: %v", v)
			}
		}()
		body, err = p.MarshalJSON()
	}()
	<-done
	return body, err
}

// chatParams turns a Request into openai-go's parameters. It refuses a
// request the API would refuse for our own mistake, so that such a bug is
// not mistaken for a provider failure.
func chatParams(req Request) (*openai.ChatCompletionNewParams, error) {
	p := &openai.ChatCompletionNewParams{
		Model:         shared.ChatModel(req.Model),
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	}
	if req.Model == "" {
		return nil, errors.New("request: model is required")
	}
	if len(req.Messages) == 0 {
		return nil, errors.New("request: at least one message is required")
	}
	if req.MaxOutputTokens < 0 {
		return nil, fmt.Errorf("request: max output tokens must not be negative, got %d", req.MaxOutputTokens)
	}
	// max_completion_tokens, not max_tokens: reasoning models refuse the
	// latter, and every chat model accepts the former.
	if req.MaxOutputTokens > 0 {
		p.MaxCompletionTokens = openai.Int(int64(req.MaxOutputTokens))
	}
	if req.SafetyIdentifier != "" {
		p.SafetyIdentifier = openai.String(req.SafetyIdentifier)
	}
	effort := req.ReasoningEffort
	if effort == "" && len(req.Tools) > 0 && ToolsNeedNoReasoning(req.Model) {
		effort = "none"
	}
	if effort != "" {
		p.ReasoningEffort = shared.ReasoningEffort(effort)
	}
	for i, m := range req.Messages {
		msg, err := chatMessage(m)
		if err != nil {
			return nil, fmt.Errorf("request: messages[%d]: %w", i, err)
		}
		p.Messages = append(p.Messages, msg)
	}
	for i, t := range req.Tools {
		tool, err := chatTool(t)
		if err != nil {
			return nil, fmt.Errorf("request: tools[%d] %q: %w", i, t.Name, err)
		}
		p.Tools = append(p.Tools, tool)
	}
	choice, err := toolChoice(req.ToolChoice, req.Tools)
	if err != nil {
		return nil, fmt.Errorf("request: %w", err)
	}
	p.ToolChoice = choice
	return p, nil
}

func chatMessage(m Message) (openai.ChatCompletionMessageParamUnion, error) {
	switch m.Role {
	case RoleSystem:
		return openai.SystemMessage(m.Content), nil
	case RoleUser:
		return openai.UserMessage(m.Content), nil
	case RoleTool:
		if m.ToolCallID == "" {
			return openai.ChatCompletionMessageParamUnion{}, errors.New("a tool message needs the id of the call it answers")
		}
		return openai.ToolMessage(m.Content, m.ToolCallID), nil
	case RoleAssistant:
		var a openai.ChatCompletionAssistantMessageParam
		if m.Content != "" || len(m.ToolCalls) == 0 {
			a.Content.OfString = openai.String(m.Content)
		}
		for _, tc := range m.ToolCalls {
			a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
				OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
					ID: tc.ID,
					Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{
						Name: tc.Name, Arguments: tc.Arguments,
					},
				},
			})
		}
		return openai.ChatCompletionMessageParamUnion{OfAssistant: &a}, nil
	}
	return openai.ChatCompletionMessageParamUnion{}, fmt.Errorf("unknown role %q", m.Role)
}

func chatTool(t ToolSpec) (openai.ChatCompletionToolUnionParam, error) {
	if t.Name == "" {
		return openai.ChatCompletionToolUnionParam{}, errors.New("name is required")
	}
	fn := shared.FunctionDefinitionParam{Name: t.Name}
	if t.Description != "" {
		fn.Description = openai.String(t.Description)
	}
	if len(t.Parameters) > 0 {
		var schema map[string]any
		if err := json.Unmarshal(t.Parameters, &schema); err != nil || schema == nil {
			return openai.ChatCompletionToolUnionParam{}, errors.New("parameters must be a JSON Schema object")
		}
		fn.Parameters = schema
	}
	return openai.ChatCompletionFunctionTool(fn), nil
}

// toolChoice maps Request.ToolChoice: with tools, "" is auto; the three
// modes pass through; anything else must name one of the tools. Without
// tools the API takes no tool_choice, so only "" and "none" make sense.
func toolChoice(choice string, tools []ToolSpec) (openai.ChatCompletionToolChoiceOptionUnionParam, error) {
	var c openai.ChatCompletionToolChoiceOptionUnionParam
	if len(tools) == 0 {
		if choice != "" && choice != "none" {
			return c, fmt.Errorf("tool choice %q without tools", choice)
		}
		return c, nil
	}
	switch choice {
	case "":
		c.OfAuto = openai.String("auto")
	case "auto", "none", "required":
		c.OfAuto = openai.String(choice)
	default:
		for _, t := range tools {
			if t.Name == choice {
				return openai.ToolChoiceOptionFunctionToolChoice(
					openai.ChatCompletionNamedToolChoiceFunctionParam{Name: choice}), nil
			}
		}
		return c, fmt.Errorf("tool choice %q is not among the tools", choice)
	}
	return c, nil
}
