package gemini_test

import (
	"errors"
	"strings"
	"testing"

	"google.golang.org/genai"

	"github.com/voxgate/voxgate/internal/testkit"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// geminiScript calls find_recipe on "recipe" and answers a tool result
// with the tools' names.
func geminiScript() sim.Script {
	yes := true
	return sim.Script{Rules: []sim.Rule{
		{Name: "results", When: sim.When{ToolResults: &yes}, Reply: sim.Reply{Text: "Found with {{tool_names}}."}},
		{Name: "call", When: sim.When{Contains: []string{"recipe"}, ToolsOffered: []string{"find_recipe"}},
			Reply: sim.Reply{ToolCalls: []sim.ScriptCall{{Name: "find_recipe", Arguments: map[string]any{"q": "soup"}}}}},
	}}
}

func geminiTools() []*genai.Tool {
	return []*genai.Tool{{FunctionDeclarations: []*genai.FunctionDeclaration{{
		Name: "find_recipe", Description: "Find a recipe",
		ParametersJsonSchema: map[string]any{"type": "object", "properties": map[string]any{"q": map[string]any{"type": "string"}}},
	}}}}
}

// TestGeminiStreamedToolLoop runs a tool loop through the real genai
// client: a signed call, then the answer to its result.
func TestGeminiStreamedToolLoop(t *testing.T) {
	t.Parallel()
	_, url := testkit.NewSim(t, sim.Config{Script: geminiScript()})
	c := simtest.NewGeminiClient(t, url)
	model := "gemini-3.8-flash"
	cfg := &genai.GenerateContentConfig{Tools: geminiTools(), SystemInstruction: genai.NewContentFromText("Be brief.", genai.RoleUser)}
	history := []*genai.Content{genai.NewContentFromText("a soup recipe please", genai.RoleUser)}

	var call *genai.Part
	var last *genai.GenerateContentResponse
	for resp, err := range c.Models.GenerateContentStream(t.Context(), model, history, cfg) {
		if err != nil {
			t.Fatalf("stream: %v", err)
		}
		for _, p := range resp.Candidates[0].Content.Parts {
			if p.FunctionCall != nil {
				call = p
			}
		}
		last = resp
	}
	if call == nil || call.FunctionCall.Name != "find_recipe" || call.FunctionCall.Args["q"] != "soup" {
		t.Fatalf("got call %+v, want find_recipe{q: soup}", call)
	}
	if len(call.ThoughtSignature) == 0 {
		t.Error("a Gemini 3 call carries no thoughtSignature")
	}
	if got := last.Candidates[0].FinishReason; got != genai.FinishReasonStop {
		t.Errorf("finish %q, want STOP", got)
	}
	if u := last.UsageMetadata; u.ThoughtsTokenCount != 32 || u.TotalTokenCount != u.PromptTokenCount+u.CandidatesTokenCount+32 {
		t.Errorf("usage %+v: want 32 thought tokens, counted in the total", u)
	}

	history = append(history, genai.NewContentFromParts([]*genai.Part{call}, genai.RoleModel),
		genai.NewContentFromParts([]*genai.Part{genai.NewPartFromFunctionResponse("find_recipe", map[string]any{"name": "Leek soup"})}, genai.RoleUser))
	resp, err := c.Models.GenerateContent(t.Context(), model, history, cfg)
	if err != nil {
		t.Fatalf("second turn: %v", err)
	}
	if got := resp.Text(); got != "Found with find_recipe." {
		t.Errorf("answer %q, want %q", got, "Found with find_recipe.")
	}
}

// TestGeminiUsage checks the counts: text tokens are ceil(bytes/4) of the
// system instruction and messages; a repeated long prompt is reported
// cached inside promptTokenCount; only thinking models report thoughts.
func TestGeminiUsage(t *testing.T) {
	t.Parallel()
	_, url := testkit.NewSim(t, sim.Config{Script: sim.Script{Text: "twelve bytes"}})
	c := simtest.NewGeminiClient(t, url)
	long := strings.Repeat("abcd", 1100) // 1,100 tokens: over the 1,024-token cache minimum
	for _, tc := range []struct {
		model    string
		thoughts int32
	}{{"gemini-3.8-flash", 32}, {"gemini-3.5-flash-lite", 0}} {
		contents := []*genai.Content{genai.NewContentFromText(long, genai.RoleUser)}
		first, err := c.Models.GenerateContent(t.Context(), tc.model, contents, nil)
		if err != nil {
			t.Fatal(err)
		}
		u := first.UsageMetadata
		if u.PromptTokenCount != 1100 || u.CandidatesTokenCount != 3 || u.ThoughtsTokenCount != tc.thoughts || u.CachedContentTokenCount != 0 {
			t.Errorf("%s first: got %+v, want prompt 1100, candidates 3, thoughts %d, nothing cached", tc.model, u, tc.thoughts)
		}
		second, err := c.Models.GenerateContent(t.Context(), tc.model, contents, nil)
		if err != nil {
			t.Fatal(err)
		}
		if u := second.UsageMetadata; u.PromptTokenCount != 1100 || u.CachedContentTokenCount != 1024 {
			t.Errorf("%s repeated: got prompt %d cached %d, want 1100 including 1024 cached", tc.model, u.PromptTokenCount, u.CachedContentTokenCount)
		}
		if second.ModelVersion != tc.model {
			t.Errorf("modelVersion %q, want %q", second.ModelVersion, tc.model)
		}
	}
}

// TestGeminiSignatures: Gemini 3 refuses a call in the current turn sent
// back without its signature, takes the documented skip value, refuses a
// made-up one; 2.5 does not check.
func TestGeminiSignatures(t *testing.T) {
	t.Parallel()
	_, url := testkit.NewSim(t, sim.Config{Script: geminiScript()})
	c := simtest.NewGeminiClient(t, url)
	history := func(sig []byte) []*genai.Content {
		call := genai.NewPartFromFunctionCall("find_recipe", map[string]any{"q": "soup"})
		call.ThoughtSignature = sig
		return []*genai.Content{
			genai.NewContentFromText("a recipe", genai.RoleUser),
			genai.NewContentFromParts([]*genai.Part{call}, genai.RoleModel),
			genai.NewContentFromParts([]*genai.Part{genai.NewPartFromFunctionResponse("find_recipe", map[string]any{"ok": true})}, genai.RoleUser),
		}
	}
	cfg := &genai.GenerateContentConfig{Tools: geminiTools()}
	for _, tc := range []struct {
		name, model string
		sig         []byte
		want        string // "" for success, else a piece of the 400's message
	}{
		{"missing", "gemini-3.8-flash", nil, "missing a thought_signature"},
		{"skip value", "gemini-3.8-flash", []byte("skip_thought_signature_validator"), ""},
		{"made up", "gemini-3.8-flash", []byte("forged"), "Corrupted thought signature"},
		{"not checked by 2.5", "gemini-2.5-flash", nil, ""},
	} {
		_, err := c.Models.GenerateContent(t.Context(), tc.model, history(tc.sig), cfg)
		var apiErr genai.APIError
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v, want success", tc.name, err)
		case tc.want != "" && (!errors.As(err, &apiErr) || apiErr.Code != 400 || apiErr.Status != "INVALID_ARGUMENT" || !strings.Contains(apiErr.Message, tc.want)):
			t.Errorf("%s: got %v, want 400 INVALID_ARGUMENT with %q", tc.name, err, tc.want)
		}
	}
}

// TestGeminiRefusals checks each error answer as genai decodes it.
func TestGeminiRefusals(t *testing.T) {
	t.Parallel()
	s, url := testkit.NewSim(t, sim.Config{})
	c := simtest.NewGeminiClient(t, url)
	for _, tc := range []struct {
		fault      sim.Fault
		code       int
		status     string
		retryDelay string
		message    string
	}{
		{sim.Fault{Kind: sim.FaultRateLimit, RetryAfter: 2}, 429, "RESOURCE_EXHAUSTED", "2s", "exceeded your current quota"},
		{sim.Fault{Kind: sim.FaultRateLimit}, 429, "RESOURCE_EXHAUSTED", "", "exceeded your current quota"},
		{sim.Fault{Kind: sim.FaultServerError}, 500, "INTERNAL", "", "internal error"},
		{sim.Fault{Kind: sim.FaultUnavailable}, 503, "UNAVAILABLE", "", "overloaded"},
		{sim.Fault{Kind: sim.FaultContextLength}, 400, "INVALID_ARGUMENT", "", "exceeds the maximum number of tokens allowed"},
		{sim.Fault{Kind: sim.FaultStreamError}, 500, "INTERNAL", "", "internal error"},
	} {
		if _, err := s.AddFault(tc.fault); err != nil {
			t.Fatal(err)
		}
		_, err := c.Models.GenerateContent(t.Context(), "gemini-3.8-flash", genai.Text("hi"), nil)
		var apiErr genai.APIError
		if !errors.As(err, &apiErr) || apiErr.Code != tc.code || apiErr.Status != tc.status || !strings.Contains(apiErr.Message, tc.message) {
			t.Errorf("%s: got %v, want %d %s", tc.fault.Kind, err, tc.code, tc.status)
			continue
		}
		if got := retryDelay(apiErr); got != tc.retryDelay {
			t.Errorf("%s: RetryInfo.retryDelay %q, want %q", tc.fault.Kind, got, tc.retryDelay)
		}
	}
	if got := s.Stats().Endpoints[sim.EndpointGeminiGenerate].FaultsServed; got != 6 {
		t.Errorf("faults counted on generateContent: %d, want 6", got)
	}
}

func retryDelay(e genai.APIError) string {
	for _, d := range e.Details {
		if d["@type"] == "type.googleapis.com/google.rpc.RetryInfo" {
			s, _ := d["retryDelay"].(string)
			return s
		}
	}
	return ""
}

// TestGeminiKeys: no key is 403 PERMISSION_DENIED, a key not configured is
// 400 API_KEY_INVALID, as the Gemini API answers them.
func TestGeminiKeys(t *testing.T) {
	t.Parallel()
	_, url := testkit.NewSim(t, sim.Config{Keys: []string{"good"}})
	c := simtest.NewGeminiClient(t, url) // sends simtest.TestKey
	_, err := c.Models.GenerateContent(t.Context(), "gemini-3.8-flash", genai.Text("hi"), nil)
	var apiErr genai.APIError
	if !errors.As(err, &apiErr) || apiErr.Code != 400 || !strings.Contains(apiErr.Message, "API key not valid") {
		t.Errorf("bad key: got %v, want 400 API key not valid", err)
	}
	resp, body := postGemini(t, url, "", `{"contents":[{"parts":[{"text":"hi"}]}]}`)
	if resp.StatusCode != 403 || !strings.Contains(string(body), "PERMISSION_DENIED") {
		t.Errorf("no key: got %d %s, want 403 PERMISSION_DENIED", resp.StatusCode, body)
	}
}

// TestGeminiBlocked: a content_filter fault on generateContent is a 200
// that genai reads as a blocked prompt, or, with after_chunks, an answer
// stopped for safety.
func TestGeminiBlocked(t *testing.T) {
	t.Parallel()
	s, url := testkit.NewSim(t, sim.Config{})
	c := simtest.NewGeminiClient(t, url)
	if _, err := s.AddFault(sim.Fault{Endpoint: sim.EndpointGeminiGenerate, Kind: sim.FaultContentFilter}); err != nil {
		t.Fatal(err)
	}
	resp, err := c.Models.GenerateContent(t.Context(), "gemini-3.8-flash", genai.Text("hi"), nil)
	if err != nil || resp.PromptFeedback == nil || resp.PromptFeedback.BlockReason != genai.BlockedReasonSafety || len(resp.Candidates) != 0 {
		t.Errorf("blocked prompt: got %+v, %v, want promptFeedback.blockReason SAFETY and no candidates", resp, err)
	}
	if _, err := s.AddFault(sim.Fault{Endpoint: sim.EndpointGeminiGenerate, Kind: sim.FaultContentFilter, AfterChunks: 1}); err != nil {
		t.Fatal(err)
	}
	resp, err = c.Models.GenerateContent(t.Context(), "gemini-3.8-flash", genai.Text("hi"), nil)
	if err != nil || len(resp.Candidates) != 1 || resp.Candidates[0].FinishReason != genai.FinishReasonSafety || resp.Candidates[0].Content != nil {
		t.Errorf("stopped answer: got %+v, %v, want finishReason SAFETY without content", resp, err)
	}
	_, body := postGeminiTo(t, url+"/v1beta/models/gemini-3.8-flash:countTokens", simtest.TestKey, `{}`)
	if !strings.Contains(string(body), "NOT_FOUND") {
		t.Errorf("unknown method: got %s, want 404 NOT_FOUND", body)
	}
}
