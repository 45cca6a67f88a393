package controlplane

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/voxgate/voxgate/billing"
	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/httpx"
)

// ReportedUsage is the usage an app reports at the end of a direct-mode
// session: the sum of the response.done usage objects it received, in the
// provider's shape, and optionally the input transcription's usage.
type ReportedUsage struct {
	Session       billing.Usage
	Transcription billing.Usage
}

// The provider's usage shape. Only these fields are read; total_tokens,
// image_tokens and anything else the provider adds are ignored (DESIGN §6).
type wireUsage struct {
	InputTokens        json.RawMessage `json:"input_tokens"`
	OutputTokens       json.RawMessage `json:"output_tokens"`
	InputTokenDetails  *wireInput      `json:"input_token_details"`
	OutputTokenDetails *wireOutput     `json:"output_token_details"`
	// Transcription is voxgate's own addition: the sum of the
	// conversation.item.input_audio_transcription.completed usage objects,
	// in their token form or their duration form.
	Transcription *wireTranscription `json:"transcription"`
}

type wireInput struct {
	TextTokens          json.RawMessage `json:"text_tokens"`
	AudioTokens         json.RawMessage `json:"audio_tokens"`
	ImageTokens         json.RawMessage `json:"image_tokens"`
	CachedTokens        json.RawMessage `json:"cached_tokens"`
	CachedTokensDetails *struct {
		TextTokens  json.RawMessage `json:"text_tokens"`
		AudioTokens json.RawMessage `json:"audio_tokens"`
		ImageTokens json.RawMessage `json:"image_tokens"`
	} `json:"cached_tokens_details"`
}

type wireOutput struct {
	TextTokens  json.RawMessage `json:"text_tokens"`
	AudioTokens json.RawMessage `json:"audio_tokens"`
}

type wireTranscription struct {
	Type              string          `json:"type"` // "tokens" or "duration"
	InputTokens       json.RawMessage `json:"input_tokens"`
	OutputTokens      json.RawMessage `json:"output_tokens"`
	Seconds           json.RawMessage `json:"seconds"`
	InputTokenDetails *struct {
		TextTokens  json.RawMessage `json:"text_tokens"`
		AudioTokens json.RawMessage `json:"audio_tokens"`
	} `json:"input_token_details"`
}

// parseUsage reads a reported usage object. Every count must be an integer
// from 0 to 10¹²; anything else, and cached tokens above their input, is
// 422. Unknown fields are ignored.
func parseUsage(raw json.RawMessage) (*ReportedUsage, error) {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return nil, nil
	}
	var w wireUsage
	if err := httpx.Unmarshal(raw, &w, true); err != nil {
		return nil, usageError("usage must be an object in the provider's usage shape")
	}
	p := &countParser{}
	var u ReportedUsage
	if d := w.InputTokenDetails; d != nil {
		u.Session.TextIn = p.count("input_token_details.text_tokens", d.TextTokens)
		u.Session.AudioIn = p.count("input_token_details.audio_tokens", d.AudioTokens)
		u.Session.ImageIn = p.count("input_token_details.image_tokens", d.ImageTokens)
		p.count("input_token_details.cached_tokens", d.CachedTokens)
		if c := d.CachedTokensDetails; c != nil {
			u.Session.TextCachedIn = p.count("cached_tokens_details.text_tokens", c.TextTokens)
			u.Session.AudioCachedIn = p.count("cached_tokens_details.audio_tokens", c.AudioTokens)
			u.Session.ImageCachedIn = p.count("cached_tokens_details.image_tokens", c.ImageTokens)
		}
	}
	if d := w.OutputTokenDetails; d != nil {
		u.Session.TextOut = p.count("output_token_details.text_tokens", d.TextTokens)
		u.Session.AudioOut = p.count("output_token_details.audio_tokens", d.AudioTokens)
	}
	// The totals are checked like any count but not billed: the details
	// say what kind each token was.
	p.count("input_tokens", w.InputTokens)
	p.count("output_tokens", w.OutputTokens)
	if t := w.Transcription; t != nil {
		switch t.Type {
		case "duration":
			u.Transcription.AudioMillis = p.count("transcription.seconds", t.Seconds) * 1000
		case "tokens", "":
			if d := t.InputTokenDetails; d != nil {
				u.Transcription.TextIn = p.count("transcription.input_token_details.text_tokens", d.TextTokens)
				u.Transcription.AudioIn = p.count("transcription.input_token_details.audio_tokens", d.AudioTokens)
			} else {
				u.Transcription.AudioIn = p.count("transcription.input_tokens", t.InputTokens)
			}
			u.Transcription.TextOut = p.count("transcription.output_tokens", t.OutputTokens)
		default:
			return nil, usageError("transcription.type must be tokens or duration")
		}
	}
	if p.err != nil {
		return nil, p.err
	}
	if u.Session.Check() != nil || u.Transcription.Check() != nil {
		return nil, usageError("cached tokens cannot exceed the input tokens they are part of")
	}
	return &u, nil
}

type countParser struct{ err error }

// count reads one count: absent or null is 0; otherwise a JSON integer in
// [0, 10¹²]. The first bad count is kept, naming its field.
func (p *countParser) count(field string, raw json.RawMessage) int64 {
	raw = bytes.TrimSpace(raw)
	if p.err != nil || len(raw) == 0 || string(raw) == "null" {
		return 0
	}
	var n json.Number
	if c := raw[0]; (c < '0' || c > '9') && c != '-' || json.Unmarshal(raw, &n) != nil {
		p.err = usageError(field + " must be a number")
		return 0
	}
	v, err := n.Int64()
	if err != nil || v < 0 || v > billing.MaxCount {
		p.err = usageError(fmt.Sprintf("%s must be a whole number from 0 to %d", field, int64(billing.MaxCount)))
		return 0
	}
	return v
}

func usageError(msg string) error {
	return apierr.New(apierr.Validation, "The usage is not valid: "+msg+".")
}
