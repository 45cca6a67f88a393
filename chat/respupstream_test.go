package chat_test

import (
	"testing"

	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/llm/openai"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// A turn through POST /v1/chat whose route's OpenAI target calls a
// reasoning model over the Responses API (api: responses): the tool runs
// in the agent loop, the answer arrives, both model calls went to
// /v1/responses and none to Chat Completions, and the second carried the
// first's reasoning back, which the simulator accepted.
func TestChatOverResponsesUpstream(t *testing.T) {
	t.Parallel()
	const model = "gpt-5-mini" // a reasoning model on the simulator, priced
	s, ts := simtest.NewServer(t, sim.Config{Latency: simtest.ZeroLatency(), Script: script()})
	f := newFixture(t, options{sim: s, simURL: ts.URL,
		cfg: func(c *config.Chat) { c.Model = model },
		provider: func(llm.Provider) llm.Provider {
			p, err := openai.Factory(openai.Params{})(llm.ProviderSpec{Name: "openai", Kind: config.KindOpenAI,
				BaseURL: ts.URL + "/v1", APIKey: simtest.TestKey, ResponsesModels: []string{model}})
			if err != nil {
				t.Fatal(err)
			}
			return p
		}})
	r := f.post(t, call{user: "u1", body: map[string]any{"message": "find me a soup"}})
	resp := r.response(t)
	if resp["message"] != "Let me look. I found tomato soup." && resp["message"] != "I found tomato soup." {
		t.Fatalf("answer %q, want the scripted one after the tool", resp["message"])
	}
	if got := f.runs.search.Load(); got != 1 {
		t.Errorf("search ran %d times, want 1", got)
	}
	st := s.Stats().Endpoints
	if st["/v1/responses"].Requests != 2 || st[sim.EndpointChatCompletions].Requests != 0 {
		t.Errorf("responses %d, chat completions %d model calls, want 2 and 0", st["/v1/responses"].Requests, st[sim.EndpointChatCompletions].Requests)
	}
	if got := st["/v1/responses"].ReasoningItemsAccepted; got != 1 {
		t.Errorf("the simulator accepted %d reasoning items, want the first call's 1 carried into the second", got)
	}
}
