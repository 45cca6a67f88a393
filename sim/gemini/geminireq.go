package gemini

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/voxgate/voxgate/sim/openai"
)

// gemRequest is the part of a GenerateContentRequest the simulator acts on.
// It is translated into a openai.ChatRequest, so the same script, token counts and
// prompt cache answer Gemini as answer Chat Completions.
type gemRequest struct {
	Contents          []gemContent   `json:"contents"`
	SystemInstruction *gemContent    `json:"systemInstruction"`
	Tools             []gemTool      `json:"tools"`
	ToolConfig        *gemToolConfig `json:"toolConfig"`
	GenerationConfig  *gemGeneration `json:"generationConfig"`
	Store             *bool          `json:"store"`
}

type gemContent struct {
	Role  string    `json:"role,omitempty"`
	Parts []gemPart `json:"parts"`
}

// gemPart is one part of a content. Only the fields the simulator reads or
// writes are here; a request part with none of them set has no data.
type gemPart struct {
	Text             *string              `json:"text,omitempty"`
	Thought          bool                 `json:"thought,omitempty"`
	FunctionCall     *gemFunctionCall     `json:"functionCall,omitempty"`
	FunctionResponse *gemFunctionResponse `json:"functionResponse,omitempty"`
	InlineData       json.RawMessage      `json:"inlineData,omitempty"`
	FileData         json.RawMessage      `json:"fileData,omitempty"`
	// ThoughtSignature is bytes, sent base64 (protobuf's JSON accepts the
	// standard and the URL-safe alphabet).
	ThoughtSignature string `json:"thoughtSignature,omitempty"`
}

type gemFunctionCall struct {
	ID   string          `json:"id,omitempty"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args,omitempty"`
}

type gemFunctionResponse struct {
	ID       string          `json:"id,omitempty"`
	Name     string          `json:"name"`
	Response json.RawMessage `json:"response"`
}

type gemTool struct {
	FunctionDeclarations []struct {
		Name                 string          `json:"name"`
		Description          string          `json:"description"`
		Parameters           json.RawMessage `json:"parameters"`
		ParametersJSONSchema json.RawMessage `json:"parametersJsonSchema"`
	} `json:"functionDeclarations"`
}

type gemToolConfig struct {
	FunctionCallingConfig *struct {
		Mode                 string   `json:"mode"`
		AllowedFunctionNames []string `json:"allowedFunctionNames"`
	} `json:"functionCallingConfig"`
}

// gemTopLevel are the request fields the API knows (and genai sends); the
// API refuses any other name.
var gemTopLevel = []string{"contents", "systemInstruction", "tools", "toolConfig", "safetySettings",
	"generationConfig", "cachedContent", "labels", "serviceTier", "store", "modelArmorConfig"}

// Thought signatures the API accepts without validating them, for calls a
// Gemini model did not make (docs: thought-signatures, "FAQ").
var gemSkipSignatures = []string{"skip_thought_signature_validator", "context_engineering_is_the_way_to_go"}

// gemSignaturePrefix marks the signatures this simulator mints, so a
// signature the client made up or mangled is told apart.
const gemSignaturePrefix = "voxgate-sim-thought:"

// decodeGeminiRequest parses a generateContent body for model into the
// openai.ChatRequest the script engine reads, refusing what the API refuses with
// its INVALID_ARGUMENT messages. strictSignatures applies Gemini 3's rule on
// thought signatures in the current turn. store is the request's store
// field, nil when it was not sent.
func decodeGeminiRequest(model string, body []byte, stream, strictSignatures bool) (req *openai.ChatRequest, store *bool, err error) {
	var g gemRequest
	if req, err = decodeGemini(model, body, stream, strictSignatures, &g); err != nil {
		return nil, nil, err
	}
	return req, g.Store, nil
}

func decodeGemini(model string, body []byte, stream, strictSignatures bool, g *gemRequest) (*openai.ChatRequest, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil || top == nil {
		return nil, gemInvalid("Invalid JSON payload received. Unexpected token.")
	}
	names := make([]string, 0, len(top))
	for k := range top {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if !slices.Contains(gemTopLevel, k) {
			return nil, gemInvalid(fmt.Sprintf("Invalid JSON payload received. Unknown name %q: Cannot find field.", k))
		}
	}
	if err := json.Unmarshal(body, g); err != nil {
		return nil, gemInvalid("Invalid JSON payload received. " + err.Error())
	}
	if len(g.Contents) == 0 {
		return nil, gemInvalid("* GenerateContentRequest.contents: contents is not specified\n")
	}
	req := &openai.ChatRequest{Model: model, Stream: &stream}
	if g.SystemInstruction != nil {
		text, err := gemText(g.SystemInstruction.Parts, "system_instruction")
		if err != nil {
			return nil, err
		}
		req.Msgs = append(req.Msgs, openai.ChatMessage{Role: "system", Text: text})
	}
	if err := gemMessages(req, g.Contents); err != nil {
		return nil, err
	}
	if strictSignatures {
		if err := checkSignatures(g.Contents); err != nil {
			return nil, err
		}
	}
	if err := gemTools(req, g); err != nil {
		return nil, err
	}
	if gc := g.GenerationConfig; gc != nil && gc.MaxOutputTokens != nil && *gc.MaxOutputTokens > 0 {
		req.MaxCompletionTokens = gc.MaxOutputTokens
	}
	if gc := g.GenerationConfig; gc != nil && gc.ThinkingConfig != nil {
		if err := checkThinkingLevel(model, gc.ThinkingConfig.ThinkingLevel); err != nil {
			return nil, err
		}
	}
	if gc := g.GenerationConfig; gc != nil {
		if err := responseFormat(req, gc); err != nil {
			return nil, err
		}
	}
	return req, nil
}

// gemText is the text of parts that may hold only text.
func gemText(parts []gemPart, where string) (string, error) {
	var b strings.Builder
	for i, p := range parts {
		if p.Text == nil {
			return "", gemInvalid(fmt.Sprintf("* GenerateContentRequest.%s.parts[%d]: only text parts are allowed here\n", where, i))
		}
		b.WriteString(*p.Text)
	}
	return b.String(), nil
}

// gemMessages translates contents into chat messages: a model content into
// an assistant message with its calls, a user content's function responses
// into tool messages answering those calls, its other parts into a user
// message. A call without an id is named by its position, and a response
// without one answers the first open call of its name, as the API pairs
// them.
func gemMessages(req *openai.ChatRequest, contents []gemContent) error {
	var open []openai.MsgToolCall // calls of the last model content not yet answered
	for ci, c := range contents {
		where := fmt.Sprintf("contents[%d]", ci)
		if c.Role != "" && c.Role != "user" && c.Role != "model" {
			return gemInvalid("Please use a valid role: user, model.")
		}
		if len(c.Parts) == 0 {
			return gemInvalid(fmt.Sprintf("* GenerateContentRequest.%s.parts: contents.parts must not be empty.\n", where))
		}
		var text strings.Builder
		var calls []openai.MsgToolCall
		responses := 0
		for pi, p := range c.Parts {
			switch {
			case p.FunctionCall != nil:
				fc := p.FunctionCall
				if fc.Name == "" {
					return gemInvalid(fmt.Sprintf("* GenerateContentRequest.%s.parts[%d].function_call.name: Name cannot be empty.\n", where, pi))
				}
				if len(fc.Args) > 0 && fc.Args[0] != '{' && string(fc.Args) != "null" {
					return gemInvalid(fmt.Sprintf("Invalid JSON payload received. Unknown name \"args\" at '%s.parts[%d].function_call': Proto field is not repeating, cannot start list.", where, pi))
				}
				tc := openai.MsgToolCall{ID: fc.ID, Type: "function"}
				if tc.ID == "" {
					tc.ID = fmt.Sprintf("gemini_call_%d_%d", ci, pi)
				}
				tc.Function.Name, tc.Function.Arguments = fc.Name, openai.CompactJSON(fc.Args)
				if tc.Function.Arguments == "" {
					tc.Function.Arguments = "{}"
				}
				calls = append(calls, tc)
			case p.FunctionResponse != nil:
				fr := p.FunctionResponse
				if fr.Name == "" {
					return gemInvalid(fmt.Sprintf("* GenerateContentRequest.%s.parts[%d].function_response.name: Name cannot be empty.\n", where, pi))
				}
				i := slices.IndexFunc(open, func(tc openai.MsgToolCall) bool {
					return tc.Function.Name == fr.Name && (fr.ID == "" || tc.ID == fr.ID)
				})
				if i < 0 {
					return gemInvalid("Please ensure that function response turn comes immediately after a function call turn. And the number of function response parts should be equal to number of function call parts of the function call turn.")
				}
				req.Msgs = append(req.Msgs, openai.ChatMessage{Role: "tool", ToolCallID: open[i].ID, Text: openai.CompactJSON(fr.Response)})
				open = slices.Delete(open, i, i+1)
				responses++
			case p.Text != nil:
				if !p.Thought { // a thought summary sent back is not part of the answer
					text.WriteString(*p.Text)
				}
			case len(p.InlineData) > 0 || len(p.FileData) > 0:
				// Media is accepted and not counted: the simulator reads text.
			default:
				return gemInvalid(fmt.Sprintf("* GenerateContentRequest.%s.parts[%d].data: required oneof field 'data' must have one initialized field\n", where, pi))
			}
		}
		if len(open) > 0 {
			return gemInvalid("Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.")
		}
		if c.Role == "model" {
			if responses > 0 {
				return gemInvalid("Please use a valid role: user, model.")
			}
			req.Msgs = append(req.Msgs, openai.ChatMessage{Role: "assistant", Text: text.String(), ToolCalls: calls})
			open = slices.Clone(calls) // answering a call must not change the message
			continue
		}
		if len(calls) > 0 {
			return gemInvalid("Please ensure that function call turn comes immediately after a user turn or after a function response turn.")
		}
		if text.Len() > 0 || responses == 0 {
			req.Msgs = append(req.Msgs, openai.ChatMessage{Role: "user", Text: text.String()})
		}
	}
	return nil
}

// checkSignatures applies Gemini 3's rule: in the current turn (everything
// after the last user content that is not only function responses), the
// first function call of each model step must carry the signature the model
// gave it, or one of the documented skip values.
func checkSignatures(contents []gemContent) error {
	start := 0
	for i := len(contents) - 1; i >= 0; i-- {
		if contents[i].Role != "model" && !onlyResponses(contents[i].Parts) {
			start = i + 1
			break
		}
	}
	for ci := start; ci < len(contents); ci++ {
		if contents[ci].Role != "model" {
			continue
		}
		for _, p := range contents[ci].Parts {
			if p.FunctionCall == nil {
				continue
			}
			if p.ThoughtSignature == "" {
				return gemMissingSignature(p.FunctionCall.Name, ci+1)
			}
			if !validSignature(p.ThoughtSignature) {
				return gemBadSignature()
			}
			break // only the first call of a step is signed
		}
	}
	return nil
}

func onlyResponses(parts []gemPart) bool {
	for _, p := range parts {
		if p.FunctionResponse == nil {
			return false
		}
	}
	return len(parts) > 0
}

func validSignature(b64 string) bool {
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		if raw, err = base64.URLEncoding.DecodeString(b64); err != nil {
			return false
		}
	}
	return bytes.HasPrefix(raw, []byte(gemSignaturePrefix)) || slices.Contains(gemSkipSignatures, string(raw))
}

// gemTools translates function declarations and the function calling
// config into the chat request's tools and tool choice.
func gemTools(req *openai.ChatRequest, g *gemRequest) error {
	for ti, t := range g.Tools {
		for fi, f := range t.FunctionDeclarations {
			where := fmt.Sprintf("tools[%d].function_declarations[%d]", ti, fi)
			if !openai.ToolNamePattern.MatchString(f.Name) {
				return gemInvalid(fmt.Sprintf("* GenerateContentRequest.%s.name: Invalid function name. Must start with a letter or an underscore. Must be alphameric (a-z, A-Z, 0-9), underscores (_), dots (.), colons (:), or dashes (-), with a maximum length of 64.\n", where))
			}
			params := f.Parameters
			if len(f.ParametersJSONSchema) > 0 {
				if len(params) > 0 {
					return gemInvalid(fmt.Sprintf("* GenerateContentRequest.%s: parameters and parameters_json_schema are mutually exclusive\n", where))
				}
				params = f.ParametersJSONSchema
			}
			var ct openai.ChatTool
			ct.Type = "function"
			ct.Function.Name, ct.Function.Description, ct.Function.Parameters = f.Name, f.Description, params
			req.Tools = append(req.Tools, ct)
		}
	}
	req.Choice = openai.ToolChoice{Mode: "none"}
	if len(req.Tools) > 0 {
		req.Choice.Mode = "auto"
	}
	if g.ToolConfig == nil || g.ToolConfig.FunctionCallingConfig == nil || len(req.Tools) == 0 {
		return nil
	}
	fc := g.ToolConfig.FunctionCallingConfig
	switch fc.Mode {
	case "", "MODE_UNSPECIFIED", "AUTO", "VALIDATED":
	case "NONE":
		req.Choice.Mode = "none"
	case "ANY":
		req.Choice.Mode = "required"
		if len(fc.AllowedFunctionNames) == 1 {
			req.Choice = openai.ToolChoice{Mode: "function", Name: fc.AllowedFunctionNames[0]}
		}
	default:
		return gemInvalid(fmt.Sprintf("Invalid value at 'tool_config.function_calling_config.mode' (type.googleapis.com/google.ai.generativelanguage.v1beta.FunctionCallingConfig.Mode), %q", fc.Mode))
	}
	for _, name := range fc.AllowedFunctionNames {
		if req.Tool(name) == nil {
			return gemInvalid(fmt.Sprintf("* GenerateContentRequest.tool_config.function_calling_config.allowed_function_names: %s is not a declared function\n", name))
		}
	}
	return nil
}
