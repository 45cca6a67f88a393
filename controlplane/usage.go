package controlplane

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"strings"

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
	// BackendModel and Backend are a live session's: the chat model its
	// delegations ran on and its tokens (livecost.go).
	BackendModel string        `json:",omitempty"`
	Backend      billing.Usage `json:",omitzero"`
	// Final is a live session's: its usage is session.closed's, the
	// provider's last word, not only the highest figure seen.
	Final bool `json:",omitempty"`
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
			u.Transcription.AudioMillis = p.millis("transcription.seconds", t.Seconds)
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

// millis reads a duration in seconds, which the provider sends with a
// fraction (2.61): absent or null is 0; otherwise a JSON number from 0 to
// 10¹² / 1000, kept as whole milliseconds, rounded half up from the exact
// decimal (no float in between). The record prices the milliseconds once.
func (p *countParser) millis(field string, raw json.RawMessage) int64 {
	raw = bytes.TrimSpace(raw)
	if p.err != nil || len(raw) == 0 || string(raw) == "null" {
		return 0
	}
	var n json.Number
	r, ok := new(big.Rat), false
	if c := raw[0]; (c >= '0' && c <= '9' || c == '-') && json.Unmarshal(raw, &n) == nil {
		_, ok = r.SetString(n.String())
	}
	if !ok {
		p.err = usageError(field + " must be a number")
		return 0
	}
	ms := r.Mul(r, big.NewRat(1000, 1))
	// Half up: floor(ms + 1/2), on the exact value.
	whole := new(big.Int).Quo(new(big.Int).Add(new(big.Int).Mul(ms.Num(), big.NewInt(2)), ms.Denom()), new(big.Int).Mul(ms.Denom(), big.NewInt(2)))
	if ms.Sign() < 0 || !whole.IsInt64() || whole.Int64() > billing.MaxCount {
		p.err = usageError(fmt.Sprintf("%s must be a number of seconds from 0 to %d", field, int64(billing.MaxCount)/1000))
		return 0
	}
	return whole.Int64()
}

func usageError(msg string) error {
	return apierr.New(apierr.Validation, "The usage is not valid: "+msg+".")
}

// Ceilings bound the usage an app may report for a direct-mode session:
// the most each token class could reach per second of the session (cached
// input is bounded by its input). The defaults are far above any real call
// (docs/voice.md: every response re-reads the conversation, so input grows
// fastest) and far below what would make a record absurd.
type Ceilings struct {
	Session, Transcription billing.Usage
}

// DefaultCeilings are the per-second bounds of docs/voice.md.
func DefaultCeilings() Ceilings {
	return Ceilings{
		Session: billing.Usage{TextIn: 32_000, TextCachedIn: 32_000, TextOut: 1_000, AudioIn: 32_000, AudioCachedIn: 32_000,
			AudioOut: 400, ImageIn: 32_000, ImageCachedIn: 32_000},
		Transcription: billing.Usage{TextIn: 100, TextOut: 200, AudioIn: 100, AudioMillis: 1_000},
	}
}

// ceilingGrace is added to a session's duration before the ceilings apply:
// the app's call starts after the server's clock does, and a report may
// round up.
const ceilingGrace = 10

// classes names u's counts as the config and the error messages do.
func classes(u billing.Usage) [9]struct {
	name string
	n    int64
} {
	return [9]struct {
		name string
		n    int64
	}{{"text_in", u.TextIn}, {"text_cached_in", u.TextCachedIn}, {"text_out", u.TextOut}, {"audio_in", u.AudioIn},
		{"audio_cached_in", u.AudioCachedIn}, {"audio_out", u.AudioOut}, {"image_in", u.ImageIn},
		{"image_cached_in", u.ImageCachedIn}, {"audio_ms", u.AudioMillis}}
}

// check refuses (422) usage that no session of durationMS could produce.
func (c Ceilings) check(u ReportedUsage, durationMS int64) error {
	seconds := (durationMS+999)/1000 + ceilingGrace
	for _, side := range []struct {
		prefix    string
		got, rate billing.Usage
	}{{"", u.Session, c.Session}, {"transcription.", u.Transcription, c.Transcription}} {
		got, rate := classes(side.got), classes(side.rate)
		for i := range got {
			if limit := rate[i].n * seconds; got[i].n > limit {
				return usageError(fmt.Sprintf("%s%s: %d is more than a %d s session can use (at most %d)",
					side.prefix, got[i].name, got[i].n, durationMS/1000, limit))
			}
		}
	}
	return nil
}

// Set changes one class's ceiling, named as in the config
// (voice.usage_ceilings: text_in, transcription.audio_ms, …).
func (c *Ceilings) Set(name string, perSecond int64) error {
	side, class := &c.Session, name
	if rest, ok := strings.CutPrefix(name, "transcription."); ok {
		side, class = &c.Transcription, rest
	}
	fields := map[string]*int64{"text_in": &side.TextIn, "text_cached_in": &side.TextCachedIn, "text_out": &side.TextOut,
		"audio_in": &side.AudioIn, "audio_cached_in": &side.AudioCachedIn, "audio_out": &side.AudioOut,
		"image_in": &side.ImageIn, "image_cached_in": &side.ImageCachedIn, "audio_ms": &side.AudioMillis}
	f, ok := fields[class]
	switch {
	case !ok:
		return fmt.Errorf("voice.usage_ceilings: no token class %q", name)
	case perSecond < 1 || perSecond > 1_000_000:
		return fmt.Errorf("voice.usage_ceilings.%s: %d per second not in [1, 1000000]", name, perSecond)
	}
	*f = perSecond
	return nil
}
