package gemini

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"google.golang.org/genai"

	"github.com/voxgate/voxgate/llm"
)

// geminiSkipSignature is the value Google documents for a function call
// that no Gemini model signed (one made by another provider, or injected):
// with it, Gemini 3 accepts the call in the current turn without
// validating it (ai.google.dev/gemini-api/docs/thought-signatures, FAQ).
var geminiSkipSignature = []byte("skip_thought_signature_validator")

// geminiRequest translates a request into genai's contents and config:
// system messages into SystemInstruction, assistant tool calls into
// functionCall parts with their ids and signatures, tool messages into
// functionResponse parts named after the call they answer (consecutive
// ones in one content, as Gemini pairs a turn of calls with one turn of
// responses). SafetyIdentifier is not sent: Gemini has no such field, and
// nothing else about the user goes to it. ReasoningEffort is sent as a
// Gemini 3 model's thinkingLevel, only one the model takes.
func geminiRequest(req llm.Request) ([]*genai.Content, *genai.GenerateContentConfig, error) {
	switch {
	case req.Model == "":
		return nil, nil, errors.New("model is required")
	case len(req.Messages) == 0:
		return nil, nil, errors.New("at least one message is required")
	case req.MaxOutputTokens < 0:
		return nil, nil, fmt.Errorf("max output tokens must not be negative, got %d", req.MaxOutputTokens)
	}
	cfg := &genai.GenerateContentConfig{AutomaticContinuation: genai.Ptr(false)}
	if req.MaxOutputTokens > 0 {
		cfg.MaxOutputTokens = int32(req.MaxOutputTokens)
	}
	if level := thinkingLevel(req.Model, req.ReasoningEffort); level != "" {
		cfg.ThinkingConfig = &genai.ThinkingConfig{ThinkingLevel: level}
	}
	names := map[string]string{} // call id -> function name, from the history
	turnStart := lastUser(req.Messages)
	strict := geminiChecksSignatures(req.Model)
	var contents []*genai.Content
	for i, m := range req.Messages {
		switch m.Role {
		case llm.RoleSystem:
			if cfg.SystemInstruction == nil {
				cfg.SystemInstruction = &genai.Content{}
			}
			if m.Content != "" {
				cfg.SystemInstruction.Parts = append(cfg.SystemInstruction.Parts, genai.NewPartFromText(m.Content))
			}
		case llm.RoleUser:
			if m.Content != "" { // Gemini refuses a part without data
				contents = append(contents, genai.NewContentFromText(m.Content, genai.RoleUser))
			}
		case llm.RoleAssistant:
			c, err := modelContent(m, names, strict && i > turnStart)
			if err != nil {
				return nil, nil, fmt.Errorf("messages[%d]: %w", i, err)
			}
			if c != nil {
				contents = append(contents, c)
			}
		case llm.RoleTool:
			part, err := responsePart(m, names)
			if err != nil {
				return nil, nil, fmt.Errorf("messages[%d]: %w", i, err)
			}
			if last := lastContent(contents); last != nil && onlyFunctionResponses(last) {
				last.Parts = append(last.Parts, part)
			} else {
				contents = append(contents, genai.NewContentFromParts([]*genai.Part{part}, genai.RoleUser))
			}
		default:
			return nil, nil, fmt.Errorf("messages[%d]: unknown role %q", i, m.Role)
		}
	}
	if cfg.SystemInstruction != nil && len(cfg.SystemInstruction.Parts) == 0 {
		cfg.SystemInstruction = nil
	}
	if len(contents) == 0 {
		return nil, nil, errors.New("no message with content besides system ones")
	}
	if err := geminiTools(cfg, req.Tools, req.ToolChoice); err != nil {
		return nil, nil, err
	}
	if err := setFormat(cfg, req.ResponseFormat); err != nil {
		return nil, nil, err
	}
	return contents, cfg, nil
}

// lastUser is the index of the last user message, where the current turn
// begins (-1 for none).
func lastUser(msgs []llm.Message) int {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == llm.RoleUser {
			return i
		}
	}
	return -1
}

// geminiChecksSignatures reports a model that refuses a call in the
// current turn sent back without its thought signature: Gemini 3's.
func geminiChecksSignatures(model string) bool {
	return strings.HasPrefix(strings.TrimPrefix(model, "models/"), "gemini-3")
}

// modelContent is an assistant message as a model content. Each call's
// signature goes back on its part when a Gemini model made it; in the
// current turn of a model that checks them (inTurn), the first call of a
// step that has none (another provider's) carries the documented skip
// value instead, so the history is accepted. Only the first call of a step
// is checked, so later ones are left unsigned.
func modelContent(m llm.Message, names map[string]string, inTurn bool) (*genai.Content, error) {
	var parts []*genai.Part
	if m.Content != "" {
		parts = append(parts, genai.NewPartFromText(m.Content))
	}
	for j, tc := range m.ToolCalls {
		if tc.ID == "" || tc.Name == "" {
			return nil, fmt.Errorf("tool_calls[%d]: a call needs its id and name", j)
		}
		names[tc.ID] = tc.Name
		part := &genai.Part{FunctionCall: &genai.FunctionCall{ID: tc.ID, Name: tc.Name, Args: callArgs(tc.Arguments)}}
		if tc.SignedBy == SignedByGemini && tc.Signature != "" {
			sig, err := base64.StdEncoding.DecodeString(tc.Signature)
			if err != nil {
				return nil, fmt.Errorf("tool_calls[%d]: signature is not base64: %w", j, err)
			}
			part.ThoughtSignature = sig
		} else if inTurn && j == 0 {
			part.ThoughtSignature = geminiSkipSignature
		}
		parts = append(parts, part)
	}
	if len(parts) == 0 {
		return nil, nil
	}
	return genai.NewContentFromParts(parts, genai.RoleModel), nil
}

// callArgs is a call's arguments as the object Gemini takes. Arguments
// another model wrote that are not a JSON object cannot be sent as one;
// they go as an empty object, and the tool's result still follows.
func callArgs(args string) map[string]any {
	var v map[string]any
	if json.Unmarshal([]byte(args), &v) != nil || v == nil {
		return map[string]any{}
	}
	return v
}

// responsePart is a tool message as a functionResponse part. A result that
// is a JSON object is sent as the response; anything else goes under
// "output", the key Gemini reads a function's output from.
func responsePart(m llm.Message, names map[string]string) (*genai.Part, error) {
	if m.ToolCallID == "" {
		return nil, errors.New("a tool message needs the id of the call it answers")
	}
	name, ok := names[m.ToolCallID]
	if !ok {
		return nil, fmt.Errorf("tool message answers call %q, which no assistant message made", m.ToolCallID)
	}
	var obj map[string]any
	if json.Unmarshal([]byte(m.Content), &obj) != nil || len(obj) == 0 {
		var v any = m.Content
		var parsed any
		if json.Unmarshal([]byte(m.Content), &parsed) == nil {
			v = parsed
		}
		obj = map[string]any{"output": v}
	}
	return &genai.Part{FunctionResponse: &genai.FunctionResponse{ID: m.ToolCallID, Name: name, Response: obj}}, nil
}

func lastContent(cs []*genai.Content) *genai.Content {
	if len(cs) == 0 {
		return nil
	}
	return cs[len(cs)-1]
}

func onlyFunctionResponses(c *genai.Content) bool {
	if c.Role != genai.RoleUser || len(c.Parts) == 0 {
		return false
	}
	for _, p := range c.Parts {
		if p.FunctionResponse == nil {
			return false
		}
	}
	return true
}

// geminiTools declares the tools (their JSON Schema as parametersJsonSchema)
// and the function calling mode: "" and auto are AUTO, none NONE, required
// ANY, a tool's name ANY restricted to it.
func geminiTools(cfg *genai.GenerateContentConfig, tools []llm.ToolSpec, choice string) error {
	if len(tools) == 0 {
		if choice != "" && choice != "none" {
			return fmt.Errorf("tool choice %q without tools", choice)
		}
		return nil
	}
	decls := make([]*genai.FunctionDeclaration, 0, len(tools))
	for i, t := range tools {
		if t.Name == "" {
			return fmt.Errorf("tools[%d]: name is required", i)
		}
		d := &genai.FunctionDeclaration{Name: t.Name, Description: t.Description}
		if len(t.Parameters) > 0 {
			var schema map[string]any
			if err := json.Unmarshal(t.Parameters, &schema); err != nil || schema == nil {
				return fmt.Errorf("tools[%d] %q: parameters must be a JSON Schema object", i, t.Name)
			}
			d.ParametersJsonSchema = schema
		}
		decls = append(decls, d)
	}
	cfg.Tools = []*genai.Tool{{FunctionDeclarations: decls}}
	fc := &genai.FunctionCallingConfig{Mode: genai.FunctionCallingConfigModeAuto}
	switch choice {
	case "", "auto":
	case "none":
		fc.Mode = genai.FunctionCallingConfigModeNone
	case "required":
		fc.Mode = genai.FunctionCallingConfigModeAny
	default:
		found := false
		for _, t := range tools {
			found = found || t.Name == choice
		}
		if !found {
			return fmt.Errorf("tool choice %q is not among the tools", choice)
		}
		fc.Mode, fc.AllowedFunctionNames = genai.FunctionCallingConfigModeAny, []string{choice}
	}
	cfg.ToolConfig = &genai.ToolConfig{FunctionCallingConfig: fc}
	return nil
}
