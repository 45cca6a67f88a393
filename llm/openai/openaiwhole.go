package openai

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"

	"github.com/voxgate/voxgate/llm"
)

// MaxWholeBytes bounds a whole answer's body: far above any answer a
// completion's max tokens allow, so only a broken upstream meets it.
const MaxWholeBytes = 16 << 20

// wholeDecoder reads a whole Chat Completion (llm.Request.Whole) as the
// one chunk of a stream: the chunk decoder's rules for text, tool calls,
// the finish reason and usage hold for both, once.
type wholeDecoder struct {
	*openaiDecoder
	wholeBody
}

// wholeBody is a whole answer's response as a stream of one: what the
// Chat Completions and Responses whole decoders share.
type wholeBody struct {
	res  *http.Response
	err  error // the request's own failure, for Next to report
	read bool
}

func (b *wholeBody) next() (bool, error) {
	switch {
	case b.err != nil:
		return false, b.err
	case b.read:
		return false, nil
	}
	b.read = true
	return true, nil
}

// body reads the answer, at most MaxWholeBytes; a read that fails is the
// transport's (classify), one too long the upstream's fault (invalid).
func (b *wholeBody) body(classify func(error) *llm.Error, invalid func(error) error) ([]byte, error) {
	body, err := io.ReadAll(io.LimitReader(b.res.Body, MaxWholeBytes+1))
	if err != nil {
		return nil, classify(err)
	}
	if len(body) > MaxWholeBytes {
		return nil, invalid(errors.New("the answer is larger than MaxWholeBytes"))
	}
	return body, nil
}

func (b *wholeBody) close() {
	if b.res != nil {
		_ = b.res.Body.Close()
	}
}

// Next and Close are the body's, over the emitter's.
func (d *wholeDecoder) Next() (bool, error) { return d.wholeBody.next() }
func (d *wholeDecoder) Close()              { d.wholeBody.close() }

// chatWhole is the part of a chat.completion the decoder reads.
type chatWhole struct {
	Model       string `json:"model"`
	ServiceTier string `json:"service_tier"`
	Choices     []struct {
		Index   int64 `json:"index"`
		Message struct {
			Content   string `json:"content"`
			ToolCalls []struct {
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage *chatUsage `json:"usage"`
}

// Take decodes the body and hands it to the chunk decoder as one chunk,
// its message as the delta.
func (d *wholeDecoder) Take() error {
	var w chatWhole
	body, err := d.body(d.Classify, d.Invalid)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(body, &w); err != nil {
		return d.Invalid(err)
	}
	c := chatChunk{Model: w.Model, ServiceTier: w.ServiceTier, Usage: w.Usage}
	for _, ch := range w.Choices {
		one := chatChoice{Index: ch.Index, FinishReason: ch.FinishReason}
		one.Delta.Content = ch.Message.Content
		for i, tc := range ch.Message.ToolCalls {
			piece := chatChunkToolCall{Index: int64(i)}
			piece.Function.Name, piece.Function.Arguments = tc.Function.Name, tc.Function.Arguments
			one.Delta.ToolCalls = append(one.Delta.ToolCalls, piece)
		}
		c.Choices = append(c.Choices, one)
	}
	return d.chunk(c)
}
