package llm_test

import (
	"testing"

	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/llm/anthropic"
	"github.com/voxgate/voxgate/sim"
)

// Sonnet 5.5 sends the text it writes before a tool call inside a thinking
// block (models.md): the adapter gives it to the caller as answer text,
// before the call, exactly as another model's text block; the tool loop's
// next request gives no thinking block back, so a failover to another
// model never replays one.
func TestAnthropicSonnetTextBetweenTools(t *testing.T) {
	yes, no := true, false
	script := sim.Script{Rules: []sim.Rule{
		{When: sim.When{Contains: []string{"weather"}, ToolResults: &no},
			Reply: sim.Reply{Text: "Let me check the sky.", ToolCalls: []sim.ScriptCall{{Name: "get_weather", Arguments: map[string]any{"city": "Paris"}}}}},
		{When: sim.When{ToolResults: &yes}, Reply: sim.Reply{Text: "Sunny."}},
	}}
	_, url := newRootSim(t, sim.Config{Script: script})
	rec := &recorder{}
	a := newAnthropic(t, url, anthropic.Params{}, rec)
	for _, model := range []string{"claude-sonnet-5-5", "claude-haiku-5-5"} {
		msgs := []llm.Message{{Role: llm.RoleUser, Content: "weather in Paris?"}}
		req := llm.Request{Model: model, Messages: msgs, Tools: []llm.ToolSpec{weatherTool}}
		st, err := a.Stream(t.Context(), req)
		if err != nil {
			t.Fatal(err)
		}
		r := drain(t, st)
		if r.err != nil || r.text != "Let me check the sky." || len(r.calls) != 1 || r.order[0] != llm.EventText {
			t.Fatalf("%s: %+v; want the text first, then the call", model, r)
		}
		text, calls := r.text, r.calls
		req.Messages = append(msgs, llm.Message{Role: llm.RoleAssistant, Content: text, ToolCalls: calls},
			llm.Message{Role: llm.RoleTool, ToolCallID: calls[0].ID, Content: `{"sky":"clear"}`})
		st, err = a.Stream(t.Context(), req)
		if err != nil {
			t.Fatal(err)
		}
		if r := drain(t, st); r.err != nil || r.text != "Sunny." {
			t.Fatalf("%s: the loop's answer %+v", model, r)
		}
	}
}
