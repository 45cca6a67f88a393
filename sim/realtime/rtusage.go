package realtime

import "github.com/voxgate/voxgate/sim/openai"

// Realtime token counts are deterministic (DESIGN §14) so billing tests can
// predict them; docs/sim.md states the same rules.
//   - audio in: ceil(ms / 100) per input audio item, i.e. RTP packets ÷ 5;
//   - audio out: ceil(ms / 50), i.e. 20 tokens per second spoken;
//   - text: ceil(bytes / 4), one ceiling over the sum;
//   - every response re-counts the whole conversation as input, and reports
//     the previous response's input as cached.

func audioInTokens(ms int) int  { return (ms + 99) / 100 }
func audioOutTokens(ms int) int { return (ms + 49) / 50 }

// convItem is a conversation item with what it adds to later input.
type convItem struct {
	item      rtItem
	textBytes int    // bytes counted as text input
	audioTok  int    // tokens counted as audio input
	userText  string // a user turn's words, for the script
}

// tokenCount is one side (text, audio) of a usage.
type tokenCount struct{ text, audio int }

// inputCount is the input of a response made now: instructions, tools and
// every item of the conversation.
func (ss *rtSession) inputCount() tokenCount {
	b := len(ss.view.instructions)
	for i := range ss.view.tools {
		f := &ss.view.tools[i].Function
		b += len(f.Name) + len(f.Description) + openai.CompactLen(f.Parameters)
	}
	var c tokenCount
	for i := range ss.items {
		b += ss.items[i].textBytes
		c.audio += ss.items[i].audioTok
	}
	c.text = openai.TokensFor(b)
	return c
}

// usage renders a response's usage; cached is the part of in that the
// previous response already sent.
func usage(in, cached, out tokenCount) *rtUsage {
	var u rtUsage
	u.InputTokens = in.text + in.audio
	u.OutputTokens = out.text + out.audio
	u.TotalTokens = u.InputTokens + u.OutputTokens
	d := &u.InputTokenDetails
	d.TextTokens, d.AudioTokens = in.text, in.audio
	d.CachedTokensDetails.TextTokens = min(cached.text, in.text)
	d.CachedTokensDetails.AudioTokens = min(cached.audio, in.audio)
	d.CachedTokens = d.CachedTokensDetails.TextTokens + d.CachedTokensDetails.AudioTokens
	u.OutputTokenDetails.TextTokens, u.OutputTokenDetails.AudioTokens = out.text, out.audio
	return &u
}

// transcriptionUsage is the usage of transcribing one audio item.
func transcriptionUsage(audioTok int, transcript string) *rtTranscriptU {
	u := &rtTranscriptU{Type: "tokens", InputTokens: audioTok, OutputTokens: openai.TokensFor(len(transcript))}
	u.InputTokenDetails.AudioTokens = audioTok
	u.TotalTokens = u.InputTokens + u.OutputTokens
	return u
}

// billed is a response's usage as the organization usage counts it (the
// price list's classes): cached input is part of input.
func (u *rtUsage) billed() openai.OrgUsage {
	d := u.InputTokenDetails
	return openai.OrgUsage{TextIn: int64(d.TextTokens), TextCached: int64(d.CachedTokensDetails.TextTokens),
		AudioIn: int64(d.AudioTokens), AudioCached: int64(d.CachedTokensDetails.AudioTokens),
		ImageIn: int64(d.ImageTokens), ImageCached: int64(d.CachedTokensDetails.ImageTokens),
		TextOut: int64(u.OutputTokenDetails.TextTokens), AudioOut: int64(u.OutputTokenDetails.AudioTokens)}
}

// billed is a transcription's usage: its audio in and text out.
func (u *rtTranscriptU) billed() openai.OrgUsage {
	return openai.OrgUsage{TextIn: int64(u.InputTokenDetails.TextTokens), AudioIn: int64(u.InputTokenDetails.AudioTokens),
		TextOut: int64(u.OutputTokens)}
}
