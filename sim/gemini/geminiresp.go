package gemini

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"time"

	"github.com/voxgate/voxgate/sim/core"
	"github.com/voxgate/voxgate/sim/openai"
)

// gemResponse is a GenerateContentResponse: the whole answer, or one chunk
// of a stream (each chunk is a whole response object with part of the
// content).
type gemResponse struct {
	Candidates     []gemCandidate     `json:"candidates,omitempty"`
	PromptFeedback *gemPromptFeedback `json:"promptFeedback,omitempty"`
	UsageMetadata  *gemUsage          `json:"usageMetadata,omitempty"`
	ModelVersion   string             `json:"modelVersion"`
	ResponseID     string             `json:"responseId"`
}

type gemCandidate struct {
	Content       *gemContent       `json:"content,omitempty"`
	FinishReason  string            `json:"finishReason,omitempty"`
	SafetyRatings []gemSafetyRating `json:"safetyRatings,omitempty"`
	Index         int               `json:"index"`
}

type gemPromptFeedback struct {
	BlockReason   string            `json:"blockReason"`
	SafetyRatings []gemSafetyRating `json:"safetyRatings,omitempty"`
}

type gemSafetyRating struct {
	Category    string `json:"category"`
	Probability string `json:"probability"`
	Blocked     bool   `json:"blocked,omitempty"`
}

// gemUsage is usageMetadata. promptTokenCount includes
// cachedContentTokenCount; thoughtsTokenCount is apart from
// candidatesTokenCount; totalTokenCount is the sum of prompt, candidates
// and thoughts.
type gemUsage struct {
	PromptTokenCount        int             `json:"promptTokenCount"`
	CandidatesTokenCount    int             `json:"candidatesTokenCount,omitempty"`
	CachedContentTokenCount int             `json:"cachedContentTokenCount,omitempty"`
	ThoughtsTokenCount      int             `json:"thoughtsTokenCount,omitempty"`
	TotalTokenCount         int             `json:"totalTokenCount"`
	PromptTokensDetails     []gemModalities `json:"promptTokensDetails,omitempty"`
	CacheTokensDetails      []gemModalities `json:"cacheTokensDetails,omitempty"`
}

type gemModalities struct {
	Modality   string `json:"modality"`
	TokenCount int    `json:"tokenCount"`
}

// geminiThoughtTokens is what a thinking model reports as thoughtsTokenCount
// for every answer: fixed, so billing tests can predict it.
const geminiThoughtTokens = 32

// geminiAnswer is a completion rendered the Gemini way.
type geminiAnswer struct {
	c         *openai.Completion // text, calls, finish and counts, as Chat Completions has them
	model     string
	id        string
	thoughts  int
	signature string // base64; on the first call part, else on the last text part
}

// newGeminiAnswer renders rep as model's answer. Gemini's args are an
// object (a protobuf Struct), so a scripted argument text that is not one
// is sent as {}; a call cut by maxOutputTokens is dropped, not sent broken.
func newGeminiAnswer(req *openai.ChatRequest, rep openai.Answer, model string, p openai.PromptTokens) *geminiAnswer {
	for i := range rep.Calls {
		rep.Calls[i].Arguments = objectOrEmpty(rep.Calls[i].Arguments)
	}
	c := openai.NewCompletion(req, rep, model, p)
	if c.Finish == "length" {
		kept := c.Calls[:0]
		for _, tc := range c.Calls {
			if json.Valid([]byte(tc.Arguments)) {
				kept = append(kept, tc)
			}
		}
		c.Calls = kept
	}
	g := &geminiAnswer{c: c, model: model, id: core.RandomID()[:22]}
	if geminiThinks(model) {
		g.thoughts = geminiThoughtTokens
		g.signature = base64.StdEncoding.EncodeToString([]byte(gemSignaturePrefix + core.RandomID()))
	}
	return g
}

func objectOrEmpty(args string) string {
	var v map[string]any
	if json.Unmarshal([]byte(args), &v) != nil || v == nil {
		return "{}"
	}
	return openai.CompactJSON(json.RawMessage(args))
}

func (g *geminiAnswer) finishReason() string {
	if g.c.Finish == "length" {
		return "MAX_TOKENS"
	}
	return "STOP" // Gemini ends a turn of function calls with STOP too
}

// usage reports the prompt, and candidates tokens so far.
func (g *geminiAnswer) usage(candidates int) *gemUsage {
	prompt, cached := g.c.Usage.PromptTokens, g.c.Usage.PromptTokensDetails.CachedTokens
	u := &gemUsage{PromptTokenCount: prompt, CandidatesTokenCount: candidates, CachedContentTokenCount: cached,
		ThoughtsTokenCount: g.thoughts, TotalTokenCount: prompt + candidates + g.thoughts,
		PromptTokensDetails: []gemModalities{{Modality: "TEXT", TokenCount: prompt}}}
	if cached > 0 {
		u.CacheTokensDetails = []gemModalities{{Modality: "TEXT", TokenCount: cached}}
	}
	return u
}

func (g *geminiAnswer) response(cand *gemCandidate, candidates int) gemResponse {
	r := gemResponse{UsageMetadata: g.usage(candidates), ModelVersion: g.model, ResponseID: g.id}
	if cand != nil {
		r.Candidates = []gemCandidate{*cand}
	}
	return r
}

func (g *geminiAnswer) textPart(text string, last bool) gemPart {
	p := gemPart{Text: &text}
	if last && len(g.c.Calls) == 0 {
		p.ThoughtSignature = g.signature
	}
	return p
}

func (g *geminiAnswer) callPart(i int) gemPart {
	tc := g.c.Calls[i]
	p := gemPart{FunctionCall: &gemFunctionCall{Name: tc.Name, Args: json.RawMessage(tc.Arguments)}}
	if i == 0 {
		p.ThoughtSignature = g.signature
	}
	return p
}

// whole is the non-streaming answer.
func (g *geminiAnswer) whole() gemResponse {
	var parts []gemPart
	if g.c.Text != "" {
		parts = append(parts, g.textPart(g.c.Text, true))
	}
	for i := range g.c.Calls {
		parts = append(parts, g.callPart(i))
	}
	return g.response(&gemCandidate{Content: &gemContent{Role: "model", Parts: parts}, FinishReason: g.finishReason()},
		g.c.Usage.CompletionTokens)
}

// steps are the chunks of a streamed answer: the text in pieces, then each
// call whole (Gemini never splits a call's arguments), the last chunk with
// the finish reason. Each chunk reports the usage so far.
func (g *geminiAnswer) steps(pieceBytes int) []gemStep {
	var out []gemStep
	sent := 0
	add := func(p gemPart, tokens int) {
		sent += tokens
		cand := &gemCandidate{Content: &gemContent{Role: "model", Parts: []gemPart{p}}}
		out = append(out, gemStep{resp: g.response(cand, sent), tokens: tokens})
	}
	var textPieces []string
	for piece := range openai.Pieces(g.c.Text, pieceBytes) {
		textPieces = append(textPieces, piece)
	}
	for i, piece := range textPieces {
		add(g.textPart(piece, i == len(textPieces)-1), openai.TokensFor(len(piece)))
	}
	for i, tc := range g.c.Calls {
		add(g.callPart(i), openai.TokensFor(len(tc.Name)+len(tc.Arguments)))
	}
	if len(out) == 0 {
		out = append(out, gemStep{resp: g.response(&gemCandidate{Content: &gemContent{Role: "model"}}, 0)})
	}
	last := &out[len(out)-1].resp
	last.Candidates[0].FinishReason = g.finishReason()
	last.UsageMetadata = g.usage(g.c.Usage.CompletionTokens)
	return out
}

type gemStep struct {
	resp   gemResponse
	tokens int
}

var gemUnsafe = []gemSafetyRating{{Category: "HARM_CATEGORY_DANGEROUS_CONTENT", Probability: "HIGH", Blocked: true}}

// blockedPrompt is the answer to a prompt the safety filters block: no
// candidates, the reason in promptFeedback.
func (g *geminiAnswer) blockedPrompt() gemResponse {
	r := g.response(nil, 0)
	r.UsageMetadata.ThoughtsTokenCount, r.UsageMetadata.TotalTokenCount = 0, r.UsageMetadata.PromptTokenCount
	r.PromptFeedback = &gemPromptFeedback{BlockReason: "SAFETY", SafetyRatings: gemUnsafe}
	return r
}

// blockedAnswer ends an answer on the safety filters: finishReason SAFETY,
// no content.
func (g *geminiAnswer) blockedAnswer(candidates int) gemResponse {
	return g.response(&gemCandidate{FinishReason: "SAFETY", SafetyRatings: gemUnsafe}, candidates)
}

// writeGemini sends a non-streaming answer after the time the model would
// take to generate it, shaped by a body fault when one was drawn.
func (s *Server) writeGemini(ctx context.Context, w http.ResponseWriter, g *geminiAnswer, f *core.Fault) error {
	resp := g.whole()
	kind := core.FaultKind("")
	if f != nil {
		kind = f.Kind
	}
	if kind == core.FaultContentFilter {
		resp = g.blockedPrompt()
		if f.AfterChunks > 0 {
			resp = g.blockedAnswer(g.c.Usage.CompletionTokens)
		}
	}
	body, _ := json.Marshal(resp) // plain structs: cannot fail
	if kind != core.FaultSlowDrip {
		if err := s.env.Wait(ctx, s.oa.TTFT(g.model)+s.env.TokenDelay(g.c.Usage.CompletionTokens)); err != nil {
			return err
		}
	}
	return s.oa.WriteWhole(ctx, w, "application/json; charset=UTF-8", body, f)
}

// streamGemini sends g as server-sent events, paced by the latency config,
// applying a stream fault when one was drawn. Gemini's stream has no end
// marker: it ends after the chunk with the finish reason.
func (s *Server) streamGemini(ctx context.Context, w http.ResponseWriter, g *geminiAnswer, f *core.Fault) error {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	sw := &openai.SSEWriter{W: w, RC: http.NewResponseController(w)}
	steps := g.steps(max(s.env.Latency.ChunkTokens, 1) * 4)
	strikeAt, drip := -1, time.Duration(0)
	if f != nil {
		switch f.Kind {
		case core.FaultCutStream, core.FaultTimeout, core.FaultMalformedJSON, core.FaultStreamError, core.FaultContentFilter:
			strikeAt = f.AfterChunks
		case core.FaultSlowDrip:
			drip = time.Duration(f.IntervalMS) * time.Millisecond
		case core.FaultNoDone:
			steps[len(steps)-1].resp.Candidates[0].FinishReason = ""
		}
	}
	sent, candidates := 0, 0
	for _, st := range steps {
		if sent == strikeAt {
			return s.strikeGemini(ctx, sw, f, g, candidates)
		}
		delay := s.env.TokenDelay(st.tokens)
		switch {
		case drip > 0:
			delay = drip
		case sent == 0:
			delay = s.oa.TTFT(g.model)
		}
		if err := s.env.Wait(ctx, delay); err != nil {
			return err
		}
		b, _ := json.Marshal(st.resp) // plain structs: cannot fail
		if err := sw.Raw(string(b)); err != nil {
			return err
		}
		sent++
		candidates += st.tokens
	}
	if strikeAt >= sent {
		return s.strikeGemini(ctx, sw, f, g, candidates)
	}
	return nil
}

// strikeGemini applies a stream fault at the current position.
func (s *Server) strikeGemini(ctx context.Context, sw *openai.SSEWriter, f *core.Fault, g *geminiAnswer, candidates int) error {
	switch f.Kind {
	case core.FaultCutStream:
		sw.Flush()
		panic(http.ErrAbortHandler) // no closing chunk: the client sees an unexpected EOF
	case core.FaultTimeout:
		sw.Flush()
		return s.env.Hang(ctx)
	case core.FaultStreamError:
		return sw.Raw(string(gemInternal().marshal()))
	case core.FaultContentFilter:
		resp := g.blockedAnswer(candidates)
		if f.AfterChunks == 0 {
			resp = g.blockedPrompt()
		}
		b, _ := json.Marshal(resp)
		return sw.Raw(string(b))
	default: // FaultMalformedJSON
		b, _ := json.Marshal(g.response(&gemCandidate{Content: &gemContent{Role: "model", Parts: []gemPart{g.textPart("?", false)}}}, candidates))
		return sw.Raw(string(openai.Malformed(b)))
	}
}
