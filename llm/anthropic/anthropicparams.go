package anthropic

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/voxgate/voxgate/llm"
)

// messageParams turns a Request into a Messages request. It refuses a
// request the API would refuse for our own mistake, so that such a bug is
// not mistaken for a provider failure.
//   - System messages, wherever they stand, become the system parameter,
//     in order: the API has no system role in messages.
//   - Tool messages become tool_result blocks of a user message, and
//     consecutive messages of one role are merged into one message: the API
//     wants user and assistant to alternate, with every tool_use answered
//     by the next message.
//   - Nothing about the user goes out: no metadata.user_id, not even the
//     salted SafetyIdentifier (DESIGN §11 gives that to OpenAI only).
//   - ReasoningEffort is not sent: extended thinking stays off, so tool
//     use needs no thinking blocks carried back.
//   - A forced tool choice goes as auto to a model known to refuse it
//     (refusesForcedToolChoice).
//   - A json_schema response format is output_config.format (format.go).
func (a *Anthropic) messageParams(req llm.Request) (*anthropic.MessageNewParams, error) {
	switch {
	case req.Model == "":
		return nil, errors.New("request: model is required")
	case len(req.Messages) == 0:
		return nil, errors.New("request: at least one message is required")
	case req.MaxOutputTokens < 0:
		return nil, fmt.Errorf("request: max output tokens must not be negative, got %d", req.MaxOutputTokens)
	}
	p := &anthropic.MessageNewParams{Model: anthropic.Model(req.Model), MaxTokens: int64(a.maxTokens)}
	if req.MaxOutputTokens > 0 {
		p.MaxTokens = int64(req.MaxOutputTokens)
	}
	if a.cache {
		// One breakpoint on the last cacheable block: each turn reads what
		// the turn before wrote, as the whole conversation is resent.
		p.CacheControl = anthropic.NewCacheControlEphemeralParam()
	}
	for i, m := range req.Messages {
		if err := addMessage(p, m); err != nil {
			return nil, fmt.Errorf("request: messages[%d]: %w", i, err)
		}
	}
	if len(p.Messages) == 0 {
		return nil, errors.New("request: only system messages")
	}
	if req.Continue && p.Messages[len(p.Messages)-1].OfAssistant == nil {
		// A continuation is a prefill: the API continues a trailing
		// assistant message (models before Claude 4.6; later ones refuse
		// it with a 400, docs/sim.md), so it must end with one.
		return nil, errors.New("request: a continuation ends with the assistant's partial answer")
	}
	for i, t := range req.Tools {
		tool, err := anthTool(t)
		if err != nil {
			return nil, fmt.Errorf("request: tools[%d] %q: %w", i, t.Name, err)
		}
		p.Tools = append(p.Tools, tool)
	}
	choice, err := anthToolChoice(req.ToolChoice, req.Tools)
	if err != nil {
		return nil, fmt.Errorf("request: %w", err)
	}
	if (choice.OfAny != nil || choice.OfTool != nil) && refusesForcedToolChoice(req.Model) {
		// The model would refuse the whole request; with auto it answers,
		// and the prompt is what steers it to the tool.
		choice = anthropic.ToolChoiceUnionParam{OfAuto: &anthropic.ToolChoiceAutoParam{}}
	}
	if req.OneCall() {
		// Anthropic's form of parallel_tool_calls: false rides on the
		// choice itself.
		switch {
		case choice.OfAuto != nil:
			choice.OfAuto.DisableParallelToolUse = anthropic.Bool(true)
		case choice.OfAny != nil:
			choice.OfAny.DisableParallelToolUse = anthropic.Bool(true)
		case choice.OfTool != nil:
			choice.OfTool.DisableParallelToolUse = anthropic.Bool(true)
		}
	}
	p.ToolChoice = choice
	if p.OutputConfig, err = outputConfig(req.ResponseFormat); err != nil {
		return nil, fmt.Errorf("request: %w", err)
	}
	return p, nil
}

// addMessage appends m to p, merging it into the last message when both
// have the same role.
func addMessage(p *anthropic.MessageNewParams, m llm.Message) error {
	var user bool // v2's MessageParam is a union: user or assistant
	var blocks []anthropic.ContentBlockParamUnion
	switch m.Role {
	case llm.RoleSystem:
		if m.Content != "" {
			p.System = append(p.System, anthropic.TextBlockParam{Text: m.Content})
		}
		return nil
	case llm.RoleUser:
		if m.Content == "" {
			return errors.New("a user message needs content")
		}
		user, blocks = true, []anthropic.ContentBlockParamUnion{anthropic.NewTextBlock(m.Content)}
	case llm.RoleTool:
		if m.ToolCallID == "" {
			return errors.New("a tool message needs the id of the call it answers")
		}
		// An empty text block is refused; an empty result has no content.
		r := anthropic.ToolResultBlockParam{ToolUseID: m.ToolCallID}
		if m.Content != "" {
			r.Content = []anthropic.ToolResultBlockParamContentUnion{{OfText: &anthropic.TextBlockParam{Text: m.Content}}}
		}
		user, blocks = true, []anthropic.ContentBlockParamUnion{{OfToolResult: &r}}
	case llm.RoleAssistant:
		if m.Content != "" {
			blocks = append(blocks, anthropic.NewTextBlock(m.Content))
		}
		for _, tc := range m.ToolCalls {
			if tc.ID == "" || tc.Name == "" {
				return errors.New("a tool call needs its id and name")
			}
			blocks = append(blocks, anthropic.NewToolUseBlock(tc.ID, toolInput(tc.Arguments), tc.Name))
		}
		if len(blocks) == 0 {
			return nil // an empty assistant turn says nothing
		}
	default:
		return fmt.Errorf("unknown role %q", m.Role)
	}
	if n := len(p.Messages); n > 0 && (p.Messages[n-1].OfUser != nil) == user {
		last := messageContent(&p.Messages[n-1])
		if m.Role == llm.RoleTool {
			// tool_result blocks come first in their user message.
			at := 0
			for at < len(*last) && (*last)[at].OfToolResult != nil {
				at++
			}
			*last = append((*last)[:at], append(blocks, (*last)[at:]...)...)
			return nil
		}
		*last = append(*last, blocks...)
		return nil
	}
	if user {
		p.Messages = append(p.Messages, anthropic.NewUserMessage(blocks...))
	} else {
		p.Messages = append(p.Messages, anthropic.NewAssistantMessage(blocks...))
	}
	return nil
}

// messageContent is the content of a user or assistant message, whichever
// arm of the union it is.
func messageContent(m *anthropic.MessageParam) *[]anthropic.ContentBlockParamUnion {
	if m.OfUser != nil {
		return &m.OfUser.Content
	}
	return &m.OfAssistant.Content
}

// toolInput is a call's arguments as the input object the API takes: a
// model cut off mid-call leaves arguments that are no JSON object, which
// go back as {} (the call never ran; its tool_result says so).
func toolInput(args string) json.RawMessage {
	var obj map[string]json.RawMessage
	if json.Unmarshal([]byte(args), &obj) != nil || obj == nil {
		return json.RawMessage("{}")
	}
	return json.RawMessage(args)
}

// anthTool maps a tool: the schema's properties and required list have
// their own fields, the rest of it rides along as extra fields.
func anthTool(t llm.ToolSpec) (anthropic.ToolUnionParam, error) {
	if t.Name == "" {
		return anthropic.ToolUnionParam{}, errors.New("name is required")
	}
	var schema anthropic.ToolInputSchemaParam
	if len(t.Parameters) > 0 {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(t.Parameters, &obj); err != nil || obj == nil {
			return anthropic.ToolUnionParam{}, errors.New("parameters must be a JSON Schema object")
		}
		for k, v := range obj {
			switch k {
			case "type":
			case "properties":
				schema.Properties = v
			case "required":
				if err := json.Unmarshal(v, &schema.Required); err != nil {
					return anthropic.ToolUnionParam{}, errors.New("parameters: required must be a list of names")
				}
			default:
				if schema.ExtraFields == nil {
					schema.ExtraFields = map[string]any{}
				}
				schema.ExtraFields[k] = v
			}
		}
	}
	tool := anthropic.ToolParam{Name: t.Name, InputSchema: schema}
	if t.Description != "" {
		tool.Description = anthropic.String(t.Description)
	}
	if t.Strict {
		tool.Strict = anthropic.Bool(true)
	}
	return anthropic.ToolUnionParam{OfTool: &tool}, nil
}

// anthToolChoice maps Request.ToolChoice as toolChoice does for OpenAI:
// "required" is Anthropic's "any".
func anthToolChoice(choice string, tools []llm.ToolSpec) (anthropic.ToolChoiceUnionParam, error) {
	var c anthropic.ToolChoiceUnionParam
	if len(tools) == 0 {
		if choice != "" && choice != "none" {
			return c, fmt.Errorf("tool choice %q without tools", choice)
		}
		return c, nil
	}
	switch choice {
	case "", "auto":
		c.OfAuto = &anthropic.ToolChoiceAutoParam{}
	case "none":
		c.OfNone = &anthropic.ToolChoiceNoneParam{}
	case "required":
		c.OfAny = &anthropic.ToolChoiceAnyParam{}
	default:
		for _, t := range tools {
			if t.Name == choice {
				c.OfTool = &anthropic.ToolChoiceToolParam{Name: choice}
				return c, nil
			}
		}
		return c, fmt.Errorf("tool choice %q is not among the tools", choice)
	}
	return c, nil
}
