package completions

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/llm"
)

// What /v1/chat/completions answers, in OpenAI's shapes, so that the
// official clients decode it unchanged (docs/chat.md).

// Completion is a whole (stream: false) answer.
type Completion struct {
	ID                string             `json:"id"`
	Object            string             `json:"object"` // "chat.completion"
	Created           int64              `json:"created"`
	Model             string             `json:"model"` // the model that answered, not the route
	Choices           []CompletionChoice `json:"choices"`
	Usage             *CompletionUsage   `json:"usage,omitempty"`
	SystemFingerprint *string            `json:"system_fingerprint"`
}

// CompletionChoice is the one choice of an answer.
type CompletionChoice struct {
	Index        int               `json:"index"`
	Message      CompletionMessage `json:"message"`
	FinishReason string            `json:"finish_reason"`
	Logprobs     *struct{}         `json:"logprobs"`
}

// CompletionUsage is usage in OpenAI's shape. Cached tokens are part of
// prompt_tokens, as §10 counts them for every provider.
type CompletionUsage struct {
	PromptTokens        int64               `json:"prompt_tokens"`
	CompletionTokens    int64               `json:"completion_tokens"`
	TotalTokens         int64               `json:"total_tokens"`
	PromptTokensDetails *PromptTokenDetails `json:"prompt_tokens_details,omitempty"`
}

// PromptTokenDetails is usage.prompt_tokens_details.
type PromptTokenDetails struct {
	CachedTokens int64 `json:"cached_tokens"`
}

// NewCompletionUsage is u in OpenAI's shape.
func NewCompletionUsage(u llm.Usage) *CompletionUsage {
	return &CompletionUsage{
		PromptTokens: u.InputTokens, CompletionTokens: u.OutputTokens,
		TotalTokens:         u.InputTokens + u.OutputTokens,
		PromptTokensDetails: &PromptTokenDetails{CachedTokens: u.CachedInputTokens},
	}
}

// Chunk is one event of a streamed answer.
type Chunk struct {
	ID                string           `json:"id"`
	Object            string           `json:"object"` // "chat.completion.chunk"
	Created           int64            `json:"created"`
	Model             string           `json:"model"`
	Choices           []ChunkChoice    `json:"choices"`
	Usage             *CompletionUsage `json:"usage,omitempty"`
	SystemFingerprint *string          `json:"system_fingerprint"`
}

// ChunkChoice is a chunk's choice: a delta, and a finish reason last.
type ChunkChoice struct {
	Index        int        `json:"index"`
	Delta        ChunkDelta `json:"delta"`
	FinishReason *string    `json:"finish_reason"`
	Logprobs     *struct{}  `json:"logprobs"`
}

// ChunkDelta is what a chunk adds to the message.
type ChunkDelta struct {
	Role      string               `json:"role,omitempty"`
	Content   *string              `json:"content,omitempty"`
	ToolCalls []CompletionToolCall `json:"tool_calls,omitempty"`
}

// ChunkWriter writes a streamed answer as server-sent events: each chunk
// a "data:" line, "data: [DONE]" after a whole answer, and OpenAI's own
// in-stream error object after a failure, so that a client raises it
// instead of taking a cut answer for a complete one (DESIGN §11).
type ChunkWriter struct {
	// out writes one data line and pushes it to the client; last is the
	// stream's last line (its error), which a server's cut may write from
	// another goroutine (unit/cut.go), so it touches nothing else of the writer.
	out     func(data []byte, last bool) error
	id      string
	created int64
	model   string
	roled   bool
}

// NewChunkWriter writes chunks of answer id to w; flush pushes them to the
// client. The endpoint writes through its event stream's Writer instead
// (newChunkStream).
func NewChunkWriter(w io.Writer, flush func(), id string, created int64) *ChunkWriter {
	bw := bufio.NewWriterSize(w, 512)
	return &ChunkWriter{id: id, created: created, out: func(data []byte, _ bool) error {
		_, _ = bw.WriteString("data: ")
		_, _ = bw.Write(data)
		if _, err := bw.WriteString("\n\n"); err != nil {
			return err
		}
		if err := bw.Flush(); err != nil {
			return err
		}
		flush()
		return nil
	}}
}

// SetModel names the model that answers, once the router has chosen it.
func (c *ChunkWriter) SetModel(model string) { c.model = model }

// Event writes what ev adds to the answer; EventToolCall and EventDone
// write nothing (the deltas carried the call; Finish ends the answer).
func (c *ChunkWriter) Event(ev llm.Event) error {
	var d ChunkDelta
	switch ev.Kind {
	case llm.EventText:
		if ev.Text == "" {
			return nil
		}
		d.Content = &ev.Text
	case llm.EventToolCallDelta:
		i := ev.Index
		tc := CompletionToolCall{Index: &i, Function: CompletionCalled{Arguments: ev.ToolCall.Arguments}}
		if ev.ToolCall.ID != "" {
			tc.ID, tc.Type, tc.Function.Name = ev.ToolCall.ID, "function", ev.ToolCall.Name
		}
		d.ToolCalls = []CompletionToolCall{tc}
	default:
		return nil
	}
	if !c.roled {
		d.Role, c.roled = "assistant", true
	}
	return c.chunk(Chunk{Choices: []ChunkChoice{{Delta: d}}})
}

// Finish ends a whole answer: the finish reason, the usage chunk when the
// client asked for it, and [DONE].
func (c *ChunkWriter) Finish(reason string, usage *llm.Usage) error {
	d := ChunkDelta{}
	if !c.roled {
		d.Role, c.roled = "assistant", true
	}
	if err := c.chunk(Chunk{Choices: []ChunkChoice{{Delta: d, FinishReason: &reason}}}); err != nil {
		return err
	}
	if usage != nil {
		if err := c.chunk(Chunk{Choices: []ChunkChoice{}, Usage: NewCompletionUsage(*usage)}); err != nil {
			return err
		}
	}
	return c.out([]byte("[DONE]"), false)
}

// Fail ends the stream with OpenAI's in-stream error object, and no
// [DONE]: the answer is not whole.
func (c *ChunkWriter) Fail(e *apierr.Error) error {
	body, err := json.Marshal(map[string]any{"error": map[string]any{
		"message": e.Message, "type": "voxgate_error", "code": string(e.Code), "param": nil,
	}})
	if err != nil {
		return err
	}
	return c.out(body, true)
}

func (c *ChunkWriter) chunk(ch Chunk) error {
	ch.ID, ch.Object, ch.Created, ch.Model = c.id, "chat.completion.chunk", c.created, c.model
	body, err := json.Marshal(ch)
	if err != nil {
		return fmt.Errorf("encode chunk: %w", err)
	}
	return c.out(body, false)
}
