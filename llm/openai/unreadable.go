package openai

import (
	"bytes"
	"encoding/json"

	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/voxgate/voxgate/llm"
)

// setAside is the stream's SSE decoder with unreadable events set aside, so
// that one bad chunk in a healthy stream does not end it (docs/llm.md,
// "Continuation"). openai-go's stream ends at the first event it cannot
// decode; here an event whose data is not JSON is skipped and counted when
// it carried none of the answer (carriesAnswer), and otherwise ends the
// stream as unreadable (llm.ErrUnreadableChunk): a hole in an answer is
// worse than its continuation.
type setAside struct {
	ssestream.Decoder
	skipped int  // set aside since the last take
	lost    bool // an event that may have carried part of the answer
}

// withSetAside wraps d, nil for nil (a request that failed has no body).
func withSetAside(d ssestream.Decoder) ssestream.Decoder {
	if d == nil {
		return nil
	}
	return &setAside{Decoder: d}
}

func (d *setAside) Next() bool {
	for d.Decoder.Next() {
		data := bytes.TrimSpace(d.Decoder.Event().Data)
		if len(data) == 0 || bytes.HasPrefix(data, []byte("[DONE]")) || json.Valid(data) {
			return true
		}
		if carriesAnswer(data) {
			d.lost = true
			return false
		}
		d.skipped++
	}
	return false
}

func (d *setAside) Err() error {
	if d.lost {
		return llm.ErrUnreadableChunk
	}
	return d.Decoder.Err()
}

// take returns how many events were skipped since the last take.
func (d *setAside) take() int {
	n := d.skipped
	d.skipped = 0
	return n
}

// answerFields are the names a Chat Completions chunk carries the answer
// (and its end) in.
var answerFields = [][]byte{[]byte(`"delta"`), []byte(`"content"`), []byte(`"refusal"`), []byte(`"tool_calls"`),
	[]byte(`"arguments"`), []byte(`"finish_reason"`)}

// carriesAnswer judges an unreadable chunk: it carried none of the answer
// only when it is whole (it ends with its closing brace, so nothing was cut
// off it) and names none of answerFields, such as a usage chunk or a
// proxy's keep-alive. Anything else may have held part of the answer.
func carriesAnswer(data []byte) bool {
	if !bytes.HasSuffix(data, []byte("}")) {
		return true
	}
	for _, f := range answerFields {
		if bytes.Contains(data, f) {
			return true
		}
	}
	return false
}
