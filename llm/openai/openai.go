package openai

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

	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/llm/adapt"
)

// Params configure an OpenAI provider.
type Params struct {
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
	// ResponsesModels are the models called over the Responses API
	// rather than Chat Completions (a route target's api: responses;
	// docs/llm.md, "Responses upstream").
	ResponsesModels []string
	// Scope names the account the provider's reasoning items are sealed
	// for (the configured provider's name): they go back only to the
	// adapter of the same scope (reasoning.go). "" is BaseURL.
	Scope string
}

// OpenAI streams Chat Completions through openai-go. It sends one request
// per call: retries and failover belong to the router behind Provider.
type OpenAI struct {
	adapt.Waits
	client    openai.Client
	responses map[string]bool // Params.ResponsesModels
	scope     string
}

var _ llm.Provider = (*OpenAI)(nil)

// NewOpenAI checks p and builds the provider.
func New(p Params) (*OpenAI, error) {
	if p.BaseURL == "" || p.APIKey == "" {
		return nil, errors.New("llm: openai: BaseURL and APIKey are required")
	}
	if !strings.HasPrefix(p.BaseURL, "https://") && !strings.HasPrefix(p.BaseURL, "http://") {
		return nil, fmt.Errorf("llm: openai: base URL %q is not http(s)", p.BaseURL)
	}
	w, err := adapt.NewWaits("openai", p.Timeout, p.FirstChunk)
	if err != nil {
		return nil, err
	}
	opts := []option.RequestOption{
		option.WithBaseURL(strings.TrimRight(p.BaseURL, "/") + "/"),
		option.WithAPIKey(p.APIKey),
		option.WithMaxRetries(0),
	}
	client := p.HTTPClient
	if client == nil {
		client = &http.Client{Transport: llm.NewTransport()}
	}
	opts = append(opts, option.WithHTTPClient(client))
	o := &OpenAI{Waits: w, client: openai.NewClient(opts...), scope: p.Scope, responses: map[string]bool{}}
	if o.scope == "" {
		o.scope = p.BaseURL
	}
	for _, m := range p.ResponsesModels {
		o.responses[m] = true
	}
	return o, nil
}

// Name is "openai".
func (o *OpenAI) Name() string { return "openai" }

// Stream starts a streamed Chat Completion and waits for its first chunk,
// so that every failure before the first event (a refusal, a timeout, a
// dropped connection, an unreadable first chunk) is returned here, where
// the router may still fail over. The call runs under ctx until the stream
// is closed: ending ctx cancels it.
func (o *OpenAI) Stream(ctx context.Context, req llm.Request) (llm.Stream, error) {
	if o.responses[req.Model] {
		return o.streamResponses(ctx, req)
	}
	params, err := chatParams(req)
	if err != nil {
		return nil, &llm.Error{Provider: o.Name(), Code: llm.UnknownProviderError, Err: err}
	}
	body, err := adapt.EncodeWith(params.MarshalJSON)
	if err != nil {
		return nil, &llm.Error{Provider: o.Name(), Code: llm.UnknownProviderError, Err: err}
	}
	if req.Whole {
		return o.whole(ctx, req, body)
	}
	s := adapt.NewCore(ctx, o.Name(), o.Waits, req.Model)
	// NewStreaming's request, its parameters already encoded (see
	// encodeWith): the same path, headers and body, "stream": true set the
	// same way.
	var raw *http.Response
	err = o.client.Post(s.Upstream(), "chat/completions", nil, &raw,
		option.WithRequestBody("application/json", body), option.WithJSONSet("stream", true))
	dec := withSetAside(ssestream.NewDecoder(raw))
	return s.Start(&openaiDecoder{Emitter: &s.Emitter, aside: dec, ttl: req.PromptCacheTTL,
		sse: ssestream.NewStream[chatChunk](dec, err)})
}

// whole asks for the answer in one response (Request.Whole): New's
// request, its parameters encoded as Stream's are, with neither stream nor
// stream options (chatParams), which the API refuses without stream.
func (o *OpenAI) whole(ctx context.Context, req llm.Request, body []byte) (llm.Stream, error) {
	s := adapt.NewCore(ctx, o.Name(), o.Waits.Whole(), req.Model)
	var raw *http.Response
	err := o.client.Post(s.Upstream(), "chat/completions", nil, &raw,
		option.WithRequestBody("application/json", body))
	return s.Start(&wholeDecoder{openaiDecoder: &openaiDecoder{Emitter: &s.Emitter, ttl: req.PromptCacheTTL}, wholeBody: wholeBody{res: raw, err: err}})
}

// chatParams turns a Request into openai-go's parameters. It refuses a
// request the API would refuse for our own mistake, so that such a bug is
// not mistaken for a provider failure.
func chatParams(req llm.Request) (*openai.ChatCompletionNewParams, error) {
	p := &openai.ChatCompletionNewParams{Model: shared.ChatModel(req.Model)}
	if !req.Whole {
		p.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
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
	switch req.PromptCacheTTL {
	case "":
	case llm.CacheTTL30m, llm.CacheTTL12h:
		// The usage reports cache writes with no TTL: the decoder
		// counts them under this one (openaiDecoder.ttl).
		p.PromptCacheOptions.Ttl = req.PromptCacheTTL
	default:
		return nil, fmt.Errorf("request: prompt cache TTL %q is not 30m or 12h", req.PromptCacheTTL)
	}
	if req.ServiceTier != "" {
		// Sent as asked; the router checked it against the tiers a
		// target may ask (config.ServiceTiers), and the API refuses any
		// other with a 400.
		p.ServiceTier = openai.ChatCompletionNewParamsServiceTier(req.ServiceTier)
	}
	effort := req.ReasoningEffort
	if effort == "" && len(req.Tools) > 0 && llm.ToolsNeedNoReasoning(req.Model) {
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
	if req.ParallelToolCalls != nil && len(req.Tools) > 0 {
		p.ParallelToolCalls = openai.Bool(*req.ParallelToolCalls)
	}
	if p.ResponseFormat, err = responseFormat(req.ResponseFormat); err != nil {
		return nil, fmt.Errorf("request: %w", err)
	}
	if req.Continue {
		if last := req.Messages[len(req.Messages)-1]; last.Role != llm.RoleAssistant {
			return nil, errors.New("request: a continuation ends with the assistant's partial answer")
		}
		// Chat Completions answers a trailing assistant message anew; an
		// OpenAI-compatible server that continues it (vLLM) is asked to
		// with these, which OpenAI's own API refuses as unknown (so a
		// target there that declares prefill fails with a 400, never
		// answering twice).
		p.SetExtraFields(map[string]any{"continue_final_message": true, "add_generation_prompt": false})
	}
	return p, nil
}

func chatMessage(m llm.Message) (openai.ChatCompletionMessageParamUnion, error) {
	switch m.Role {
	case llm.RoleSystem:
		return openai.SystemMessage(m.Content), nil
	case llm.RoleUser:
		return openai.UserMessage(m.Content), nil
	case llm.RoleTool:
		if m.ToolCallID == "" {
			return openai.ChatCompletionMessageParamUnion{}, errors.New("a tool message needs the id of the call it answers")
		}
		return openai.ToolMessage(m.Content, m.ToolCallID), nil
	case llm.RoleAssistant:
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

func chatTool(t llm.ToolSpec) (openai.ChatCompletionToolUnionParam, error) {
	if t.Name == "" {
		return openai.ChatCompletionToolUnionParam{}, errors.New("name is required")
	}
	fn := shared.FunctionDefinitionParam{Name: t.Name}
	if t.Description != "" {
		fn.Description = openai.String(t.Description)
	}
	if t.Strict {
		fn.Strict = openai.Bool(true)
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
func toolChoice(choice string, tools []llm.ToolSpec) (openai.ChatCompletionToolChoiceOptionUnionParam, error) {
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

// responseFormat maps Request.ResponseFormat to response_format; nil
// sends none (text).
func responseFormat(f *llm.ResponseFormat) (openai.ChatCompletionNewParamsResponseFormatUnion, error) {
	var u openai.ChatCompletionNewParamsResponseFormatUnion
	switch {
	case f == nil:
	case f.Type == llm.FormatJSONObject:
		u.OfJSONObject = &shared.ResponseFormatJSONObjectParam{}
	case f.Type == llm.FormatJSONSchema:
		js := shared.ResponseFormatJSONSchemaJSONSchemaParam{Name: f.Name}
		if f.Description != "" {
			js.Description = openai.String(f.Description)
		}
		if f.Strict {
			js.Strict = openai.Bool(true)
		}
		if len(f.Schema) > 0 {
			// A map, as a tool's parameters: openai-go writes it as
			// given, where a json.Number would go as a string.
			var schema map[string]any
			if err := json.Unmarshal(f.Schema, &schema); err != nil || schema == nil {
				return u, errors.New("response format: schema must be a JSON Schema object")
			}
			js.Schema = schema
		}
		u.OfJSONSchema = &shared.ResponseFormatJSONSchemaParam{JSONSchema: js}
	default:
		return u, fmt.Errorf("response format %q is not json_object or json_schema", f.Type)
	}
	return u, nil
}
