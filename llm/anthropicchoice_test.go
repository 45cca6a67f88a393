package llm_test

import (
	"encoding/json"
	"testing"

	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/llm/anthropic"
	"github.com/voxgate/voxgate/sim"
)

// A forced tool choice ("required", or a tool's name) goes as auto to
// Sonnet 5.5 and its snapshots, which refuse the whole request otherwise
// (the simulator does, as models.md says the API does); other models get
// it forced. Every call is answered: none is refused.
func TestAnthropicForcedToolChoice(t *testing.T) {
	_, url := newRootSim(t, sim.Config{Script: weatherScript()})
	rec := &recorder{}
	a := newAnthropic(t, url, anthropic.Params{}, rec)
	for _, c := range []struct {
		model, choice, want string
	}{
		{"claude-sonnet-5-5", "required", `{"type":"auto"}`},
		{"claude-sonnet-5-5", "get_weather", `{"type":"auto"}`},
		{"claude-sonnet-5-5-20261001", "required", `{"type":"auto"}`},
		{"claude-sonnet-5-5", "none", `{"type":"none"}`},
		{"claude-haiku-5-5", "required", `{"type":"any"}`},
		{"claude-haiku-5-5", "get_weather", `{"name":"get_weather","type":"tool"}`},
	} {
		req := llm.Request{Model: c.model, ToolChoice: c.choice, Tools: []llm.ToolSpec{weatherTool},
			Messages: []llm.Message{{Role: llm.RoleUser, Content: "weather in Paris?"}}}
		r := drain(t, mustStream(t, a, req))
		if r.err != nil || r.done == nil {
			t.Errorf("%s, %s: %v, want an answer", c.model, c.choice, r.err)
		}
		var body struct {
			ToolChoice json.RawMessage `json:"tool_choice"`
		}
		if err := json.Unmarshal(rec.last(t), &body); err != nil {
			t.Fatal(err)
		}
		if got := string(body.ToolChoice); got != c.want {
			t.Errorf("%s, %s: sent tool_choice %s, want %s", c.model, c.choice, got, c.want)
		}
	}
	// A name that is not among the tools is still refused locally.
	_, err := a.Stream(t.Context(), llm.Request{Model: "claude-sonnet-5-5", ToolChoice: "nope", Tools: []llm.ToolSpec{weatherTool},
		Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}})
	if e := anthErr(t, err); e.Code != llm.UnknownProviderError || e.Status != 0 {
		t.Errorf("an unknown forced tool: got %+v, want refused before sending", e)
	}
}
