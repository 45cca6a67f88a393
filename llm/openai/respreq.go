package openai

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/llm/adapt"
)

// The Responses upstream (docs/llm.md, "Responses upstream"): a target
// whose route says api: responses is called at POST /v1/responses
// rather than Chat Completions. The request is stateless, store: false,
// so nothing of the conversation is kept at OpenAI, and asks for the
// reasoning's encrypted_content, which the model needs back with its
// tool calls to keep its reasoning across a tool loop (reasoning.go).

// minResponsesOutput is the least max_output_tokens the Responses API
// takes (it refuses less with a 400; Chat Completions has no floor).
const minResponsesOutput = 16

// responsesParams turns a Request into openai-go's Responses parameters,
// refusing what the API would refuse for our own mistake, as chatParams
// does. scope is the account and model's (streamResponses): reasoning
// sealed under another is not sent.
func responsesParams(req llm.Request, scope string) (*responses.ResponseNewParams, error) {
	switch {
	case req.Model == "":
		return nil, errors.New("request: model is required")
	case len(req.Messages) == 0:
		return nil, errors.New("request: at least one message is required")
	case req.MaxOutputTokens < 0:
		return nil, fmt.Errorf("request: max output tokens must not be negative, got %d", req.MaxOutputTokens)
	case req.Continue:
		// Responses has no way to continue a partial answer; the config
		// refuses continue: prefill on such a target.
		return nil, errors.New("request: a continuation cannot be asked over the Responses API")
	}
	p := &responses.ResponseNewParams{Model: shared.ResponsesModel(req.Model), Store: openai.Bool(false),
		Include: []responses.ResponseIncludable{responses.ResponseIncludableReasoningEncryptedContent}}
	if req.MaxOutputTokens > 0 {
		p.MaxOutputTokens = openai.Int(int64(max(req.MaxOutputTokens, minResponsesOutput)))
	}
	if req.SafetyIdentifier != "" {
		p.SafetyIdentifier = openai.String(req.SafetyIdentifier)
	}
	switch req.PromptCacheTTL {
	case "":
	case llm.CacheTTL30m, llm.CacheTTL12h:
		p.PromptCacheOptions.Ttl = req.PromptCacheTTL
	default:
		return nil, fmt.Errorf("request: prompt cache TTL %q is not 30m or 12h", req.PromptCacheTTL)
	}
	if req.ServiceTier != "" {
		p.ServiceTier = responses.ResponseNewParamsServiceTier(req.ServiceTier)
	}
	if req.ReasoningEffort != "" {
		p.Reasoning.Effort = shared.ReasoningEffort(req.ReasoningEffort)
	}
	for i, m := range req.Messages {
		items, err := inputItems(m, scope)
		if err != nil {
			return nil, fmt.Errorf("request: messages[%d]: %w", i, err)
		}
		p.Input.OfInputItemList = append(p.Input.OfInputItemList, items...)
	}
	for i, t := range req.Tools {
		chat, err := chatTool(t) // the same checks of name and parameters
		if err != nil {
			return nil, fmt.Errorf("request: tools[%d] %q: %w", i, t.Name, err)
		}
		fn := chat.OfFunction.Function
		params := fn.Parameters
		if params == nil {
			params = map[string]any{"type": "object", "properties": map[string]any{}}
		}
		// strict is sent either way: Responses takes a tool without it
		// as strict, which Chat Completions does not.
		tool := responses.ToolParamOfFunction(t.Name, params, t.Strict)
		tool.OfFunction.Description = fn.Description
		p.Tools = append(p.Tools, tool)
	}
	if err := responsesToolChoice(p, req.ToolChoice, req.Tools); err != nil {
		return nil, fmt.Errorf("request: %w", err)
	}
	if req.ParallelToolCalls != nil && len(req.Tools) > 0 {
		p.ParallelToolCalls = openai.Bool(*req.ParallelToolCalls)
	}
	if err := responsesFormat(p, req.ResponseFormat); err != nil {
		return nil, fmt.Errorf("request: %w", err)
	}
	return p, nil
}

// inputItems is one message as Responses input: a system, user or
// assistant message as an easy message; an assistant's calls as
// function_call items, each led by the reasoning that preceded it when
// this scope sealed it; a tool message as a function_call_output.
func inputItems(m llm.Message, scope string) ([]responses.ResponseInputItemUnionParam, error) {
	var out []responses.ResponseInputItemUnionParam
	switch m.Role {
	case llm.RoleSystem:
		out = append(out, responses.ResponseInputItemParamOfMessage(m.Content, responses.EasyInputMessageRoleSystem))
	case llm.RoleUser:
		out = append(out, responses.ResponseInputItemParamOfMessage(m.Content, responses.EasyInputMessageRoleUser))
	case llm.RoleTool:
		if m.ToolCallID == "" {
			return nil, errors.New("a tool message needs the id of the call it answers")
		}
		o := responses.ResponseInputItemFunctionCallOutputParam{CallID: openai.String(m.ToolCallID)}
		o.Output.OfString = openai.String(m.Content)
		out = append(out, responses.ResponseInputItemUnionParam{OfFunctionCallOutput: &o})
	case llm.RoleAssistant:
		if m.Content != "" || len(m.ToolCalls) == 0 {
			out = append(out, responses.ResponseInputItemParamOfMessage(m.Content, responses.EasyInputMessageRoleAssistant))
		}
		for _, tc := range m.ToolCalls {
			for _, r := range carriedReasoning(tc, scope) {
				item := responses.ResponseReasoningItemParam{ID: r.ID, EncryptedContent: openai.String(r.EncryptedContent),
					Summary: []responses.ResponseReasoningItemSummaryParam{}}
				out = append(out, responses.ResponseInputItemUnionParam{OfReasoning: &item})
			}
			out = append(out, responses.ResponseInputItemParamOfFunctionCall(tc.Arguments, tc.ID, tc.Name))
		}
	default:
		return nil, fmt.Errorf("unknown role %q", m.Role)
	}
	return out, nil
}

// responsesToolChoice maps Request.ToolChoice as toolChoice does for
// chat: with tools "" is auto, the three modes pass, a name forces its
// tool; without tools only "" and "none" make sense, and none is sent.
func responsesToolChoice(p *responses.ResponseNewParams, choice string, tools []llm.ToolSpec) error {
	if _, err := toolChoice(choice, tools); err != nil {
		return err
	}
	switch {
	case len(tools) == 0:
	case choice == "":
		p.ToolChoice.OfToolChoiceMode = openai.Opt(responses.ToolChoiceOptionsAuto)
	case choice == "auto" || choice == "none" || choice == "required":
		p.ToolChoice.OfToolChoiceMode = openai.Opt(responses.ToolChoiceOptions(choice))
	default:
		p.ToolChoice.OfFunctionTool = &responses.ToolChoiceFunctionParam{Name: choice}
	}
	return nil
}

// responsesFormat maps Request.ResponseFormat to text.format, as
// responseFormat does to chat's response_format.
func responsesFormat(p *responses.ResponseNewParams, f *llm.ResponseFormat) error {
	chat, err := responseFormat(f) // the same checks
	if err != nil || f == nil {
		return err
	}
	if chat.OfJSONObject != nil {
		p.Text.Format.OfJSONObject = &shared.ResponseFormatJSONObjectParam{}
		return nil
	}
	js := chat.OfJSONSchema.JSONSchema
	schema, _ := js.Schema.(map[string]any) // responseFormat made it a map
	p.Text.Format.OfJSONSchema = &responses.ResponseFormatTextJSONSchemaConfigParam{Name: js.Name,
		Schema: schema, Strict: js.Strict, Description: js.Description}
	return nil
}

// streamResponses is Stream over the Responses API: the same waits, the
// same early failures, the request encoded as NewStreaming's (or New's,
// for a whole answer) and read by respDecoder.
func (o *OpenAI) streamResponses(ctx context.Context, req llm.Request) (llm.Stream, error) {
	// Reasoning is scoped by the account and the model: another model
	// of the same account (a route's fallback) reasons anew.
	scope := o.scope + "/" + req.Model
	params, err := responsesParams(req, scope)
	if err != nil {
		return nil, &llm.Error{Provider: o.Name(), Code: llm.UnknownProviderError, Err: err}
	}
	body, err := adapt.EncodeWith(params.MarshalJSON)
	if err != nil {
		return nil, &llm.Error{Provider: o.Name(), Code: llm.UnknownProviderError, Err: err}
	}
	var raw *http.Response
	if req.Whole {
		s := adapt.NewCore(ctx, o.Name(), o.Waits.Whole(), req.Model)
		err := o.client.Post(s.Upstream(), "responses", nil, &raw, option.WithRequestBody("application/json", body))
		return s.Start(&respWhole{respDecoder: &respDecoder{Emitter: &s.Emitter, scope: scope, ttl: req.PromptCacheTTL}, wholeBody: wholeBody{res: raw, err: err}})
	}
	s := adapt.NewCore(ctx, o.Name(), o.Waits, req.Model)
	err = o.client.Post(s.Upstream(), "responses", nil, &raw,
		option.WithRequestBody("application/json", body), option.WithJSONSet("stream", true))
	return s.Start(&respDecoder{Emitter: &s.Emitter, scope: scope, ttl: req.PromptCacheTTL,
		sse: ssestream.NewStream[respEvent](ssestream.NewDecoder(raw), err)})
}
