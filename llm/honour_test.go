package llm_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/llm/anthropic"
	"github.com/voxgate/voxgate/sim"
)

// twoCallsScript calls get_weather twice in one answer.
func twoCallsScript() sim.Script {
	return sim.Script{Rules: []sim.Rule{{When: sim.When{Contains: []string{"weather"}},
		Reply: sim.Reply{ToolCalls: []sim.ScriptCall{
			{Name: "get_weather", Arguments: map[string]any{"city": "Paris"}},
			{Name: "get_weather", Arguments: map[string]any{"city": "Rome"}},
		}}}}}
}

// oneStrictCall is a request for at most one call of a strict tool.
func oneStrictCall(model string) llm.Request {
	strict := weatherTool
	strict.Strict = true
	one := false
	return llm.Request{Model: model, Messages: []llm.Message{{Role: llm.RoleUser, Content: "weather in Paris and Rome?"}},
		Tools: []llm.ToolSpec{strict}, ParallelToolCalls: &one}
}

// TestToolFieldsForwarded: parallel_tool_calls: false and a strict tool
// reach each provider in its own form, as the simulator received them;
// Gemini, which has neither, keeps one call of an answer that made two.
func TestToolFieldsForwarded(t *testing.T) {
	t.Parallel()
	t.Run("openai", func(t *testing.T) {
		_, url := newSim(t, sim.Config{Script: twoCallsScript()})
		rec := &recorder{}
		s, err := newOpenAI(t, url, 0, rec).Stream(t.Context(), oneStrictCall("gpt-4o-mini"))
		if err != nil {
			t.Fatal(err)
		}
		r := drain(t, s)
		if r.err != nil || len(r.calls) != 1 {
			t.Fatalf("got %d calls, err %v: the simulator keeps one under parallel_tool_calls: false", len(r.calls), r.err)
		}
		var body struct {
			Parallel *bool `json:"parallel_tool_calls"`
			Tools    []struct {
				Function struct {
					Strict *bool `json:"strict"`
				} `json:"function"`
			} `json:"tools"`
		}
		if err := json.Unmarshal(rec.last(t), &body); err != nil {
			t.Fatal(err)
		}
		if body.Parallel == nil || *body.Parallel || body.Tools[0].Function.Strict == nil || !*body.Tools[0].Function.Strict {
			t.Fatalf("sent %s", rec.last(t))
		}
	})
	t.Run("anthropic", func(t *testing.T) {
		_, url := newRootSim(t, sim.Config{Script: twoCallsScript()})
		rec := &recorder{}
		s, err := newAnthropic(t, url, anthropic.Params{}, rec).Stream(t.Context(), oneStrictCall("claude-haiku-5-5"))
		if err != nil {
			t.Fatal(err)
		}
		if r := drain(t, s); r.err != nil || len(r.calls) != 1 {
			t.Fatalf("got %d calls, err %v", len(r.calls), r.err)
		}
		var body struct {
			Choice struct {
				Type    string `json:"type"`
				Disable *bool  `json:"disable_parallel_tool_use"`
			} `json:"tool_choice"`
			Tools []struct {
				Strict *bool `json:"strict"`
			} `json:"tools"`
		}
		if err := json.Unmarshal(rec.last(t), &body); err != nil {
			t.Fatal(err)
		}
		if body.Choice.Type != "auto" || body.Choice.Disable == nil || !*body.Choice.Disable || body.Tools[0].Strict == nil || !*body.Tools[0].Strict {
			t.Fatalf("sent %s", rec.last(t))
		}
	})
	t.Run("gemini", func(t *testing.T) {
		_, url := newRootSim(t, sim.Config{Script: twoCallsScript()})
		req := oneStrictCall(geminiModel)
		req.Tools[0].Strict = false // Gemini cannot take it; see the router's test
		s, err := newGemini(t, url, 0, nil).Stream(t.Context(), req)
		if err != nil {
			t.Fatal(err)
		}
		r := drain(t, s)
		if r.err != nil || len(r.calls) != 1 || len(r.callDeltas) != 1 || r.calls[0].Arguments != `{"city":"Paris"}` {
			t.Fatalf("got calls %+v, deltas %d, err %v: want the first alone", r.calls, len(r.callDeltas), r.err)
		}
		req.ParallelToolCalls = nil
		s, err = newGemini(t, url, 0, nil).Stream(t.Context(), req)
		if err != nil {
			t.Fatal(err)
		}
		if r := drain(t, s); len(r.calls) != 2 {
			t.Fatalf("by default: %d calls, want both", len(r.calls))
		}
	})
}

// TestRouterPassesOverUnhonoured: a target whose provider cannot honour
// the request (Gemini and a strict tool) is passed over, traced
// unsupported, and the next target answers; a route none of whose
// targets can is named by Unhonoured, so the caller refuses it first.
func TestRouterPassesOverUnhonoured(t *testing.T) {
	t.Parallel()
	_, root := newRootSim(t, sim.Config{Script: twoCallsScript()})
	gem := newGemini(t, root, 0, nil)
	oai := newOpenAI(t, root+"/v1", 0, nil)
	r, err := llm.NewRouter(llm.RouterParams{
		Providers: map[string]llm.Provider{"gemini-main": gem, "openai": oai},
		Routes: []llm.Route{
			{Name: "mixed", Targets: []llm.Target{{Provider: "gemini-main", Model: geminiModel}, {Provider: "openai", Model: "gpt-4o-mini"}}},
			{Name: "gemini", Targets: []llm.Target{{Provider: "gemini-main", Model: geminiModel}}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	req := oneStrictCall("mixed")
	if got := r.Unhonoured("mixed", req); got != "" {
		t.Errorf("mixed route: Unhonoured %q, want none (openai can)", got)
	}
	if got := r.Unhonoured("gemini", req); got != "tools[0].function.strict" {
		t.Errorf("gemini route: Unhonoured %q", got)
	}
	lax := oneStrictCall("gemini")
	lax.Tools[0].Strict = false
	if got := r.Unhonoured("gemini", lax); got != "" {
		t.Errorf("parallel_tool_calls: false alone: Unhonoured %q, want none (Gemini keeps one call)", got)
	}
	s, err := r.Stream(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	res := drain(t, s)
	if res.err != nil || res.done == nil || len(res.calls) != 1 {
		t.Fatalf("result %+v", res)
	}
	want := []string{"gemini-main/" + geminiModel + ":unsupported", "openai/gpt-4o-mini:success"}
	if got := res.done.Trace.Strings(); !slices.Equal(got, want) {
		t.Fatalf("trace %v, want %v", got, want)
	}
}
