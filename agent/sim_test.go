package agent_test

import (
	"context"
	"testing"

	"github.com/voxgate/voxgate/agent"
	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/llm/openai"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// The loop against the simulator through the real OpenAI adapter: the
// model calls a tool, reads its output under the call's id (the simulator
// refuses a tool message that answers no call) and answers; both calls'
// usage is counted as the provider reported it.
func TestRunAgainstTheSimulator(t *testing.T) {
	t.Parallel()
	no, yes := false, true
	_, ts := simtest.NewServer(t, sim.Config{Latency: simtest.ZeroLatency(), Script: sim.Script{Rules: []sim.Rule{
		{When: sim.When{Contains: []string{"find"}, ToolResults: &no},
			Reply: sim.Reply{Text: "Let me look. ", ToolCalls: []sim.ScriptCall{{Name: "search", Arguments: map[string]any{"q": "soup"}}}}},
		{When: sim.When{Contains: []string{"find"}, ToolResults: &yes}, Reply: sim.Reply{Text: "I found {{tool_names}}."}},
	}}})
	p, err := openai.New(openai.Params{BaseURL: ts.URL + "/v1", APIKey: simtest.TestKey})
	if err != nil {
		t.Fatal(err)
	}
	req := llm.Request{Model: "gpt-4.1-mini", Messages: []llm.Message{{Role: llm.RoleUser, Content: "find soup"}}, Tools: specs}
	h := &host{}
	res, err := agent.Run(context.Background(), p, req, h)
	if err != nil {
		t.Fatal(err)
	}
	if len(h.calls) != 1 || h.calls[0].Name != "search" || h.calls[0].ID == "" {
		t.Fatalf("calls %+v: want one search call with an id", h.calls)
	}
	if res.Text != "Let me look. I found search." {
		t.Errorf("text %q", res.Text)
	}
	if u := res.Usage; u.Calls != 2 || u.Estimated || u.InputTokens <= 0 || u.OutputTokens <= 0 || u.Model == "" {
		t.Errorf("usage %+v: want two reported calls", u)
	}
}
