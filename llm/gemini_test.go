package llm_test

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/llm/gemini"
	"github.com/voxgate/voxgate/sim"
)

// TestGeminiToolLoop runs a streamed turn that calls a tool, then the turn
// with its result, through genai against the simulator: the call comes as
// one delta and one whole call under a gateway id, signed; the signature
// goes back on the call's part; the result is answered.
func TestGeminiToolLoop(t *testing.T) {
	t.Parallel()
	_, url := newRootSim(t, sim.Config{Script: geminiRecipeScript()})
	rec := &recorder{}
	g := newGemini(t, url, 0, rec)
	req := llm.Request{Model: geminiModel, Tools: []llm.ToolSpec{geminiRecipeTool}, Messages: []llm.Message{
		{Role: llm.RoleSystem, Content: "Be brief."},
		{Role: llm.RoleUser, Content: "a soup recipe please"},
	}}
	st, err := g.Stream(t.Context(), req)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	r := drain(t, st)
	if r.err != nil {
		t.Fatalf("first turn: %v", r.err)
	}
	if len(r.callDeltas) != 1 || len(r.calls) != 1 {
		t.Fatalf("got %d deltas and %d calls, want one of each", len(r.callDeltas), len(r.calls))
	}
	call, delta := r.calls[0], r.callDeltas[0].ToolCall
	if call.Name != "find_recipe" || call.Arguments != `{"q":"soup"}` || !strings.HasPrefix(call.ID, "call_") || len(call.ID) > 40 {
		t.Errorf("call %+v: want find_recipe {\"q\":\"soup\"} under a gateway id", call)
	}
	if delta.ID != call.ID || delta.Name != call.Name || delta.Arguments != call.Arguments || r.callDeltas[0].Index != 0 {
		t.Errorf("delta %+v at %d: want the whole call %+v at index 0", delta, r.callDeltas[0].Index, call)
	}
	if call.SignedBy != gemini.SignedByGemini || call.Signature == "" {
		t.Errorf("call signed by %q with %q: want a Gemini signature", call.SignedBy, call.Signature)
	}
	if r.done.FinishReason != llm.FinishToolCalls {
		t.Errorf("finish %q, want tool_calls", r.done.FinishReason)
	}

	req.Messages = append(req.Messages,
		llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{call}},
		llm.Message{Role: llm.RoleTool, ToolCallID: call.ID, Content: `{"name":"Leek soup"}`})
	st, err = g.Stream(t.Context(), req)
	if err != nil {
		t.Fatalf("second turn: %v", err)
	}
	r = drain(t, st)
	if r.err != nil || r.text != "Found with find_recipe." || r.done.FinishReason != llm.FinishStop {
		t.Fatalf("second turn: got %q, %v, want the answer to the result, finish stop", r.text, r.err)
	}
	body := bodyOf(t, rec.last(t))
	wantSig, _ := base64.StdEncoding.DecodeString(call.Signature)
	for path, want := range map[string]any{
		"systemInstruction.parts.0.text":                    "Be brief.",
		"contents.1.role":                                   "model",
		"contents.1.parts.0.functionCall.id":                call.ID,
		"contents.1.parts.0.thoughtSignature":               base64.StdEncoding.EncodeToString(wantSig),
		"contents.2.parts.0.functionResponse.id":            call.ID,
		"contents.2.parts.0.functionResponse.name":          "find_recipe",
		"contents.2.parts.0.functionResponse.response.name": "Leek soup",
	} {
		if got, ok := jsonPath(body, path); !ok || got != want {
			t.Errorf("%s: got %v, want %v", path, got, want)
		}
	}
}

// TestGeminiUsage maps usageMetadata to §10's classes: the prompt count
// already holds the cached tokens; thinking tokens are output.
func TestGeminiUsage(t *testing.T) {
	t.Parallel()
	_, url := newRootSim(t, sim.Config{Script: sim.Script{Text: "twelve bytes"}})
	g := newGemini(t, url, 0, nil)
	long := strings.Repeat("abcd", 1100) // 1,100 tokens: over the cache minimum
	for i, want := range []llm.Usage{
		{Model: geminiModel, InputTokens: 1100, OutputTokens: 3 + 32},
		{Model: geminiModel, InputTokens: 1100, CachedInputTokens: 1024, OutputTokens: 3 + 32},
	} {
		st, err := g.Stream(t.Context(), userRequest(geminiModel, long))
		if err != nil {
			t.Fatal(err)
		}
		r := drain(t, st)
		if r.err != nil {
			t.Fatal(r.err)
		}
		if got := *r.done.Usage; got != want {
			t.Errorf("request %d: usage %+v, want %+v", i, got, want)
		}
	}
	// A model that does not think reports no thoughts, so output is the
	// answer alone.
	st, err := g.Stream(t.Context(), userRequest("gemini-3.5-flash-lite", "hi"))
	if err != nil {
		t.Fatal(err)
	}
	if r := drain(t, st); r.err != nil || r.done.Usage.OutputTokens != 3 {
		t.Errorf("flash-lite: %v, usage %+v, want 3 output tokens", r.err, r.done)
	}
}

// TestGeminiHistoryFromAnotherProvider: a tool loop that began on another
// provider (gateway ids, no signatures) continues on Gemini 3, which
// would refuse unsigned calls in the current turn: the first call of the
// step carries the documented skip value, calls of earlier turns none.
func TestGeminiHistoryFromAnotherProvider(t *testing.T) {
	t.Parallel()
	_, url := newRootSim(t, sim.Config{Script: geminiRecipeScript()})
	rec := &recorder{}
	g := newGemini(t, url, 0, rec)
	old, first, second := llm.NewCallID(), llm.NewCallID(), llm.NewCallID()
	req := llm.Request{Model: geminiModel, Tools: []llm.ToolSpec{geminiRecipeTool}, Messages: []llm.Message{
		{Role: llm.RoleUser, Content: "a recipe for lunch"},
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: old, Name: "find_recipe", Arguments: `{"q":"salad"}`}}},
		{Role: llm.RoleTool, ToolCallID: old, Content: "Caesar salad"},
		{Role: llm.RoleAssistant, Content: "A Caesar salad."},
		{Role: llm.RoleUser, Content: "and two soup recipes"},
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{
			{ID: first, Name: "find_recipe", Arguments: `{"q":"leek"}`},
			{ID: second, Name: "find_recipe", Arguments: `{"q":"pea"}`},
		}},
		{Role: llm.RoleTool, ToolCallID: first, Content: `{"name":"Leek soup"}`},
		{Role: llm.RoleTool, ToolCallID: second, Content: "[1, 2]"},
	}}
	st, err := g.Stream(t.Context(), req)
	if err != nil {
		t.Fatalf("Stream: %v (Gemini refused the history)", err)
	}
	if r := drain(t, st); r.err != nil || r.text != "Found with find_recipe." {
		t.Fatalf("got %q, %v, want the answer to the results", r.text, r.err)
	}
	body := bodyOf(t, rec.last(t))
	skip := base64.StdEncoding.EncodeToString([]byte("skip_thought_signature_validator"))
	for path, want := range map[string]any{
		"contents.1.parts.0.functionCall.id":                    old,
		"contents.2.parts.0.functionResponse.response.output":   "Caesar salad",
		"contents.5.parts.0.thoughtSignature":                   skip,
		"contents.6.parts.1.functionResponse.id":                second,
		"contents.6.parts.1.functionResponse.response.output.1": float64(2),
	} {
		if got, ok := jsonPath(body, path); !ok || got != want {
			t.Errorf("%s: got %v, want %v", path, got, want)
		}
	}
	for _, path := range []string{"contents.1.parts.0.thoughtSignature", "contents.5.parts.1.thoughtSignature"} {
		if got, ok := jsonPath(body, path); ok {
			t.Errorf("%s: got %v, want no signature where none is checked", path, got)
		}
	}

	// Gemini 2.5 does not check, so nothing is made up for it.
	req.Model = "gemini-2.5-flash"
	st, err = g.Stream(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	_ = drain(t, st)
	if got, ok := jsonPath(bodyOf(t, rec.last(t)), "contents.5.parts.0.thoughtSignature"); ok {
		t.Errorf("gemini-2.5-flash: got signature %v, want none", got)
	}
}

// TestGeminiRequestShape checks the rest of the request: the tool choice,
// the output limit, and that nothing about the user is sent.
func TestGeminiRequestShape(t *testing.T) {
	t.Parallel()
	_, url := newRootSim(t, sim.Config{Script: geminiRecipeScript()})
	rec := &recorder{}
	g := newGemini(t, url, 0, rec)
	req := userRequest(geminiModel, "a recipe")
	req.Tools, req.ToolChoice, req.MaxOutputTokens = []llm.ToolSpec{geminiRecipeTool}, "find_recipe", 64
	req.SafetyIdentifier = "hash-of-user-42"
	st, err := g.Stream(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if r := drain(t, st); r.err != nil || len(r.calls) != 1 {
		t.Fatalf("got %v, %d calls, want the forced call", r.err, len(r.calls))
	}
	raw := rec.last(t)
	body := bodyOf(t, raw)
	for path, want := range map[string]any{
		"toolConfig.functionCallingConfig.mode":                    "ANY",
		"toolConfig.functionCallingConfig.allowedFunctionNames.0":  "find_recipe",
		"generationConfig.maxOutputTokens":                         float64(64),
		"tools.0.functionDeclarations.0.parametersJsonSchema.type": "object",
	} {
		if got, ok := jsonPath(body, path); !ok || got != want {
			t.Errorf("%s: got %v, want %v", path, got, want)
		}
	}
	if strings.Contains(string(raw), "hash-of-user-42") || strings.Contains(string(raw), "automaticContinuation") {
		t.Errorf("body %s: carries the safety identifier or an SDK-only option", raw)
	}
}

// TestGeminiRefusesBadRequests checks the mistakes caught before anything
// is sent.
func TestGeminiRefusesBadRequests(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	g := newGemini(t, "http://127.0.0.1:9", 0, rec)
	for name, req := range map[string]llm.Request{
		"no model":         {Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}},
		"no messages":      {Model: geminiModel},
		"only system":      {Model: geminiModel, Messages: []llm.Message{{Role: llm.RoleSystem, Content: "x"}}},
		"unknown role":     {Model: geminiModel, Messages: []llm.Message{{Role: "robot", Content: "hi"}}},
		"orphan result":    {Model: geminiModel, Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}, {Role: llm.RoleTool, ToolCallID: "call_x", Content: "1"}}},
		"choice, no tools": {Model: geminiModel, ToolChoice: "required", Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}},
		"bad schema":       {Model: geminiModel, Tools: []llm.ToolSpec{{Name: "f", Parameters: []byte(`[1]`)}}, Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}},
	} {
		_, err := g.Stream(t.Context(), req)
		if e := geminiError(t, err); e.Code != llm.UnknownProviderError || e.Retryable {
			t.Errorf("%s: got %s retryable %v, want UNKNOWN_PROVIDER_ERROR, not retryable", name, e.Code, e.Retryable)
		}
	}
	if len(rec.bodies) != 0 {
		t.Errorf("%d requests sent, want none", len(rec.bodies))
	}
}

// TestGeminiBaseURLFromEnvironment: with no base URL configured, genai's
// own GOOGLE_GEMINI_BASE_URL decides, which is how `voxgate dev` points
// the provider at the simulator. (Not parallel: it sets the environment.)
func TestGeminiBaseURLFromEnvironment(t *testing.T) {
	_, url := newRootSim(t, sim.Config{Script: sim.Script{Text: "from the environment"}})
	t.Setenv("GOOGLE_GEMINI_BASE_URL", url)
	g, err := gemini.New(t.Context(), gemini.Params{APIKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	if g.Name() != "gemini" {
		t.Errorf("default name %q, want gemini", g.Name())
	}
	st, err := g.Stream(t.Context(), userRequest(geminiModel, "hi"))
	if err != nil {
		t.Fatal(err)
	}
	if r := drain(t, st); r.err != nil || r.text != "from the environment" {
		t.Errorf("got %q, %v, want the simulator's answer", r.text, r.err)
	}
}
