package llm_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/llm/gemini"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

const geminiModel = "gemini-3.8-flash"

func newGemini(t *testing.T, baseURL string, timeout time.Duration, rt http.RoundTripper) *gemini.Gemini {
	t.Helper()
	p := gemini.Params{Name: "gemini-main", BaseURL: baseURL, APIKey: simtest.TestKey, Timeout: timeout}
	if rt != nil {
		p.HTTPClient = &http.Client{Transport: rt}
	}
	g, err := gemini.New(t.Context(), p)
	if err != nil {
		t.Fatalf("NewGemini: %v", err)
	}
	return g
}

// geminiError unwraps an *llm.Error from the configured provider.
func geminiError(t *testing.T, err error) *llm.Error {
	t.Helper()
	var e *llm.Error
	if !errors.As(err, &e) {
		t.Fatalf("got %v (%T), want an *llm.Error", err, err)
	}
	if e.Provider != "gemini-main" {
		t.Errorf("provider: got %q, want the configured name gemini-main", e.Provider)
	}
	return e
}

// geminiRecipeScript calls find_recipe on "recipe" and answers tool results with
// the tools' names.
func geminiRecipeScript() sim.Script {
	yes := true
	return sim.Script{Rules: []sim.Rule{
		{Name: "results", When: sim.When{ToolResults: &yes}, Reply: sim.Reply{Text: "Found with {{tool_names}}."}},
		{Name: "call", When: sim.When{Contains: []string{"recipe"}, ToolsOffered: []string{"find_recipe"}},
			Reply: sim.Reply{ToolCalls: []sim.ScriptCall{{Name: "find_recipe", Arguments: map[string]any{"q": "soup"}}}}},
	}}
}

var geminiRecipeTool = llm.ToolSpec{Name: "find_recipe", Description: "Find a recipe",
	Parameters: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}}}`)}

// bodyOf decodes a recorded request body.
func bodyOf(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("request body %s: %v", b, err)
	}
	return m
}
