package anthropic

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"

	"github.com/voxgate/voxgate/sim/openai"
)

// messagesRequest is the part of Anthropic's Messages request the simulator
// acts on; the other documented parameters are accepted and ignored, and
// names the API does not know are refused, as the API does.
type messagesRequest struct {
	Model      string           `json:"model"`
	MaxTokens  *int             `json:"max_tokens"`
	Messages   []anthMessage    `json:"messages"`
	System     json.RawMessage  `json:"system"`
	Stream     bool             `json:"stream"`
	Tools      []anthTool       `json:"tools"`
	ToolChoice *anthToolChoice  `json:"tool_choice"`
	Metadata   *anthMetadata    `json:"metadata"`
	Cache      *json.RawMessage `json:"cache_control"`
	Thinking   *anthThinking    `json:"thinking"`
	// OutputConfig holds the structured-output format (format.go).
	OutputConfig json.RawMessage    `json:"output_config"`
	cacheMarks   int                // cache_control markers found anywhere
	system       []anthContentBlock // System as blocks
	format       json.RawMessage    // output_config.format's schema, nil for text
}

// anthThinking is a request's extended-thinking setting: its type
// (enabled, disabled, adaptive, …) is all the simulator reads.
type anthThinking struct {
	Type string `json:"type"`
}

type anthMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
	blocks  []anthContentBlock
}

// anthContentBlock is one content block of a request: text, tool_use,
// tool_result (whose content is a string or text blocks) or an assistant's
// thinking block given back (thinking.go).
type anthContentBlock struct {
	Type      string           `json:"type"`
	Text      *string          `json:"text"`
	ID        string           `json:"id"`
	Name      string           `json:"name"`
	Input     json.RawMessage  `json:"input"`
	ToolUseID string           `json:"tool_use_id"`
	Content   json.RawMessage  `json:"content"`
	IsError   *bool            `json:"is_error"`
	Cache     *json.RawMessage `json:"cache_control"`
	Thinking  *string          `json:"thinking"`
	Signature string           `json:"signature"`
}

type anthTool struct {
	Name        string           `json:"name"`
	Description string           `json:"description"`
	InputSchema json.RawMessage  `json:"input_schema"`
	Type        string           `json:"type"`
	Cache       *json.RawMessage `json:"cache_control"`
}

type anthToolChoice struct {
	Type                   string `json:"type"`
	Name                   string `json:"name"`
	DisableParallelToolUse bool   `json:"disable_parallel_tool_use"`
}

type anthMetadata struct {
	UserID *string `json:"user_id"`
}

// messagesParams are the request's top-level names the API documents.
var messagesParams = []string{"model", "max_tokens", "messages", "system", "stream", "tools", "tool_choice",
	"metadata", "cache_control", "temperature", "top_k", "top_p", "stop_sequences", "thinking", "service_tier",
	"container", "mcp_servers", "context_management", "output_config", "inference_geo", "speed", "diagnostics"}

// anthToolIDPattern is what the API accepts as a tool_use id.
var anthToolIDPattern = regexp.MustCompile(`^[a-zA-Z0-9_-]+$`)

// decodeMessagesRequest parses and checks a Messages body, refusing what
// the real API refuses with its own error shape (*anthError).
func decodeMessagesRequest(body []byte) (*messagesRequest, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil || top == nil {
		return nil, anthInvalid("There was an error parsing the body of your request. Please ensure it is valid JSON.")
	}
	for name := range top {
		if !slices.Contains(messagesParams, name) {
			return nil, anthInvalid(name + ": Extra inputs are not permitted")
		}
	}
	var req messagesRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, anthInvalid("Invalid request body: " + jsonProblem(err))
	}
	switch {
	case req.Model == "":
		return nil, anthInvalid("model: Field required")
	case req.MaxTokens == nil:
		return nil, anthInvalid("max_tokens: Field required")
	case *req.MaxTokens < 1:
		return nil, anthInvalid("max_tokens: Input should be greater than or equal to 1")
	case req.Messages == nil:
		return nil, anthInvalid("messages: Field required")
	case len(req.Messages) == 0:
		return nil, anthInvalid("messages: at least one message is required")
	}
	if req.Cache != nil {
		req.cacheMarks++
	}
	if err := req.decodeSystem(); err != nil {
		return nil, err
	}
	for i := range req.Messages {
		if err := req.decodeMessage(i); err != nil {
			return nil, err
		}
	}
	if err := checkAnthToolPairs(req.Messages); err != nil {
		return nil, err
	}
	if err := req.checkTools(); err != nil {
		return nil, err
	}
	format, err := decodeOutputConfig(req.OutputConfig, req.Model)
	if err != nil {
		return nil, err
	}
	req.format = format
	return &req, nil
}

func (r *messagesRequest) decodeSystem() error {
	if len(r.System) == 0 || string(r.System) == "null" {
		return nil
	}
	var s string
	if json.Unmarshal(r.System, &s) == nil {
		if s != "" {
			r.system = []anthContentBlock{{Type: "text", Text: &s}}
		}
		return nil
	}
	if err := json.Unmarshal(r.System, &r.system); err != nil {
		return anthInvalid("system: Input should be a valid string or a list of text blocks")
	}
	for i, b := range r.system {
		if b.Type != "text" || b.Text == nil || *b.Text == "" {
			return anthInvalid(fmt.Sprintf("system.%d: text content blocks must be non-empty", i))
		}
		if b.Cache != nil {
			r.cacheMarks++
		}
	}
	return nil
}

func (r *messagesRequest) decodeMessage(i int) error {
	m := &r.Messages[i]
	where := fmt.Sprintf("messages.%d", i)
	if m.Role != "user" && m.Role != "assistant" {
		return anthInvalid(fmt.Sprintf("%s.role: Input should be 'user' or 'assistant'", where))
	}
	var s string
	switch {
	case len(m.Content) == 0 || string(m.Content) == "null":
		return anthInvalid(where + ".content: Field required")
	case json.Unmarshal(m.Content, &s) == nil:
		if s == "" && (m.Role == "user" || i < len(r.Messages)-1) {
			return anthInvalid(where + ": all messages must have non-empty content except for the optional final assistant message")
		}
		if s != "" {
			m.blocks = []anthContentBlock{{Type: "text", Text: &s}}
		}
		return nil
	case json.Unmarshal(m.Content, &m.blocks) != nil:
		return anthInvalid(where + ".content: Input should be a valid string or a list of content blocks")
	case len(m.blocks) == 0 && (m.Role == "user" || i < len(r.Messages)-1):
		return anthInvalid(where + ": all messages must have non-empty content except for the optional final assistant message")
	}
	for j := range m.blocks {
		if err := r.checkBlock(m.Role, &m.blocks[j], fmt.Sprintf("%s.content.%d", where, j)); err != nil {
			return err
		}
	}
	return nil
}

func (r *messagesRequest) checkBlock(role string, b *anthContentBlock, where string) error {
	if b.Cache != nil {
		r.cacheMarks++
	}
	switch b.Type {
	case "text":
		if b.Text == nil || *b.Text == "" {
			return anthInvalid(where + ": text content blocks must be non-empty")
		}
	case "tool_use":
		if role != "assistant" {
			return anthInvalid(where + ": tool_use blocks are only allowed in assistant messages")
		}
		if !anthToolIDPattern.MatchString(b.ID) {
			return anthInvalid(where + ".id: String should match pattern '^[a-zA-Z0-9_-]+$'")
		}
		if b.Name == "" {
			return anthInvalid(where + ".name: Field required")
		}
		if len(b.Input) == 0 || b.Input[0] != '{' {
			return anthInvalid(where + ".input: Input should be a valid dictionary")
		}
	case "tool_result":
		if role != "user" {
			return anthInvalid(where + ": tool_result blocks are only allowed in user messages")
		}
		if b.ToolUseID == "" {
			return anthInvalid(where + ".tool_use_id: Field required")
		}
		text, err := toolResultText(b.Content)
		if err != nil {
			return anthInvalid(where + ".content: " + err.Error())
		}
		b.Text = &text
	case "thinking":
		if role != "assistant" {
			return anthInvalid(where + ": thinking blocks are only allowed in assistant messages")
		}
		return checkThinking(r.Model, b, where)
	default:
		return anthInvalid(fmt.Sprintf("%s.type: the simulator supports only 'text', 'tool_use', 'tool_result' and 'thinking' blocks, got '%s'", where, b.Type))
	}
	return nil
}

// toolResultText is a tool_result's content as text: a string, text blocks,
// or nothing.
func toolResultText(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var parts []openai.ContentPart
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", fmt.Errorf("Input should be a valid string or a list of content blocks")
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Type != "text" || p.Text == "" {
			return "", fmt.Errorf("text content blocks must be non-empty")
		}
		b.WriteString(p.Text)
	}
	return b.String(), nil
}

// checkAnthToolPairs enforces the API's rule on tool use: the message after
// an assistant message with tool_use blocks is a user message that starts
// with a tool_result for each of them, and a tool_result answers a tool_use
// of the message just before.
func checkAnthToolPairs(msgs []anthMessage) error {
	var pending []string
	for i, m := range msgs {
		answered := map[string]bool{}
		leading := true
		for _, b := range m.blocks {
			if b.Type != "tool_result" {
				leading = false
				continue
			}
			if !slices.Contains(pending, b.ToolUseID) {
				return anthInvalid(fmt.Sprintf("messages.%d.content: unexpected `tool_use_id` found in `tool_result` blocks: %s. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.", i, b.ToolUseID))
			}
			if !leading {
				return anthInvalid(fmt.Sprintf("messages.%d.content: `tool_result` blocks must come first in the user message", i))
			}
			answered[b.ToolUseID] = true
		}
		for _, id := range pending {
			if !answered[id] {
				return anthInvalid(fmt.Sprintf("messages.%d: `tool_use` ids were found without `tool_result` blocks immediately after: %s. Each `tool_use` block must have a corresponding `tool_result` block in the next message.", i-1, id))
			}
		}
		pending = pending[:0]
		for _, b := range m.blocks {
			if b.Type == "tool_use" {
				pending = append(pending, b.ID)
			}
		}
	}
	if len(pending) > 0 && msgs[len(msgs)-1].Role == "assistant" {
		return anthInvalid(fmt.Sprintf("messages.%d: `tool_use` ids were found without `tool_result` blocks immediately after: %s. Each `tool_use` block must have a corresponding `tool_result` block in the next message.", len(msgs)-1, pending[0]))
	}
	return nil
}

func (r *messagesRequest) checkTools() error {
	for i, t := range r.Tools {
		where := fmt.Sprintf("tools.%d", i)
		if t.Type != "" && t.Type != "custom" {
			return anthInvalid(fmt.Sprintf("%s.type: the simulator supports only custom tools, got '%s'", where, t.Type))
		}
		if !openai.ToolNamePattern.MatchString(t.Name) {
			return anthInvalid(where + ".name: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'")
		}
		if len(t.InputSchema) == 0 || t.InputSchema[0] != '{' {
			return anthInvalid(where + ".input_schema: Input should be a valid dictionary")
		}
		if t.Cache != nil {
			r.cacheMarks++
		}
	}
	c := r.ToolChoice
	if c == nil {
		return nil
	}
	switch c.Type {
	case "auto", "any", "none":
	case "tool":
		if !slices.ContainsFunc(r.Tools, func(t anthTool) bool { return t.Name == c.Name }) {
			return anthInvalid(fmt.Sprintf("tool_choice.name: tool '%s' was not found in 'tools'", c.Name))
		}
	default:
		return anthInvalid("tool_choice.type: Input should be 'auto', 'any', 'tool' or 'none'")
	}
	if c.Type != "none" && len(r.Tools) == 0 {
		return anthInvalid("tool_choice: may only be specified while providing tools")
	}
	return nil
}

// chat translates the request into the script engine's terms, so that the
// same scripts and counts answer both surfaces: the system prompt is a
// system message, tool_result blocks are tool messages (ahead of the text
// of their user message), tool_use blocks are tool calls with their input
// as compact JSON arguments.
func (r *messagesRequest) chat() *openai.ChatRequest {
	req := &openai.ChatRequest{Model: r.Model, MaxTokens: r.MaxTokens, Stream: &r.Stream}
	if r.format != nil {
		// The script's default answer is then JSON the schema accepts.
		req.Format = &openai.ResponseFormat{Type: "json_schema", Schema: r.format}
	}
	if len(r.system) > 0 {
		req.Msgs = append(req.Msgs, openai.ChatMessage{Role: "system", Text: blocksText(r.system)})
	}
	for _, m := range r.Messages {
		out := openai.ChatMessage{Role: m.Role}
		for _, b := range m.blocks {
			switch b.Type {
			case "tool_result":
				req.Msgs = append(req.Msgs, openai.ChatMessage{Role: "tool", ToolCallID: b.ToolUseID, Text: *b.Text})
			case "tool_use":
				tc := openai.MsgToolCall{ID: b.ID, Type: "function"}
				tc.Function.Name, tc.Function.Arguments = b.Name, openai.CompactJSON(b.Input)
				out.ToolCalls = append(out.ToolCalls, tc)
			}
		}
		out.Text = blocksText(m.blocks)
		if out.Text != "" || len(out.ToolCalls) > 0 {
			req.Msgs = append(req.Msgs, out)
		}
	}
	for _, t := range r.Tools {
		var ct openai.ChatTool
		ct.Type = "function"
		ct.Function.Name, ct.Function.Description, ct.Function.Parameters = t.Name, t.Description, t.InputSchema
		req.Tools = append(req.Tools, ct)
	}
	req.Choice = openai.ToolChoice{Mode: "auto"}
	if len(r.Tools) == 0 {
		req.Choice.Mode = "none"
	}
	if c := r.ToolChoice; c != nil {
		switch c.Type {
		case "any":
			req.Choice.Mode = "required"
		case "tool":
			req.Choice = openai.ToolChoice{Mode: "function", Name: c.Name}
		case "none":
			req.Choice.Mode = "none"
		}
		if c.DisableParallelToolUse {
			no := false
			req.ParallelToolCalls = &no
		}
	}
	return req
}

func blocksText(blocks []anthContentBlock) string {
	var b strings.Builder
	for _, bl := range blocks {
		if bl.Type == "text" && bl.Text != nil {
			b.WriteString(*bl.Text)
		}
	}
	return b.String()
}

// jsonProblem names what was wrong with a body that parsed as JSON but not
// into the request's shape.
func jsonProblem(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Sprintf("%s: Input should be a valid %s", te.Field, te.Type.Kind())
	}
	return "malformed JSON"
}

// anthInvalid is a 400 invalid_request_error.
func anthInvalid(msg string) *anthError {
	return &anthError{Status: http.StatusBadRequest, Type: "invalid_request_error", Message: msg}
}
