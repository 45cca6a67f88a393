package completions_test

import (
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/voxgate/voxgate/internal/testkit"
	"github.com/voxgate/voxgate/sim"
)

func runNode(t *testing.T, node, dir string, args ...string) map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{"completions.mjs"}, args...)...)
	cmd.Dir = dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node %v: %v\n%s", args, err, stderr.String())
	}
	var got map[string]any
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("node printed %q: %v", out, err)
	}
	return got
}

// TestNodeOpenAIClient: the official Node openai client, unchanged, gets
// whole and streamed answers (a tool call passed through, with usage),
// finishes a tool loop, sees a 404 for a model that names no route, and
// raises the in-stream error of a cut answer instead of returning it.
func TestNodeOpenAIClient(t *testing.T) {
	t.Parallel()
	node, dir := testkit.NodeClient(t)
	c := newComplFixture(t)
	base := c.gateway + "/v1"

	got := runNode(t, node, dir, base, "u-node", "ok")
	whole := got["whole"].(map[string]any)
	if whole["content"] != "Hello there." || whole["model"] != primaryModel {
		t.Errorf("whole: %v", whole)
	}
	if u, _ := whole["usage"].(map[string]any); u == nil || u["total_tokens"].(float64) == 0 {
		t.Errorf("whole usage: %v", whole["usage"])
	}
	st := got["streamed"].(map[string]any)
	calls, _ := st["calls"].([]any)
	if len(calls) != 1 || st["finish"] != "tool_calls" {
		t.Fatalf("streamed: %v", st)
	}
	call := calls[0].(map[string]any)
	if call["name"] != "get_weather" || call["arguments"] != `{"city":"Paris"}` || call["id"] == "" {
		t.Errorf("tool call: %v", call)
	}
	if u, _ := st["usage"].(map[string]any); u == nil || u["prompt_tokens"].(float64) == 0 {
		t.Errorf("include_usage: %v", st["usage"])
	}
	if models, _ := st["models"].([]any); len(models) != 1 || models[0] != primaryModel {
		t.Errorf("chunk models: %v", st["models"])
	}
	if got["answer"] != weatherAnswer {
		t.Errorf("tool loop answer: %v", got["answer"])
	}
	if m := got["missing"].(map[string]any); m["status"] != float64(404) || m["code"] != "NOT_FOUND" || m["param"] != "model" {
		t.Errorf("unknown model: %v", m)
	}
	if n := c.runs.Load(); n != 0 {
		t.Errorf("voxgate ran %d tools", n)
	}
	if recs := c.records(t, "u-node"); len(recs) != 3 {
		t.Errorf("records: %d, want 3 completions", len(recs))
	}

	c.primary.fault(t, sim.Fault{Kind: sim.FaultCutStream, Fraction: 1, AfterChunks: 3})
	cut := runNode(t, node, dir, base, "u-node", "cut")
	raised, _ := cut["raised"].(map[string]any)
	if raised == nil || raised["name"] != "APIError" || raised["code"] != "AI_UNAVAILABLE" || cut["text"] == "" {
		t.Errorf("a cut answer was not raised: %v", cut)
	}
}
