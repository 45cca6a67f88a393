package responses_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/voxgate/voxgate/billing"
	"github.com/voxgate/voxgate/internal/testkit"
	"github.com/voxgate/voxgate/safety"
)

// nodeResponses runs testdata/node/responses.mjs once against gateway as
// user and returns what the Node openai client saw.
func nodeResponses(t *testing.T, node, dir, gateway, user string, args ...string) map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{"responses.mjs", gateway + "/v1", user}, args...)...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node responses.mjs %v: %v\n%s", args, err, out)
	}
	var got map[string]any
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("node printed %q: %v", out, err)
	}
	return got
}

// The official Node openai client, unchanged, against the Responses
// endpoint of two replicas over one database: create, stream,
// previous_response_id served by the other replica, retrieve and delete
// for the owner, another user's id 404 (NotFoundError), and a medical
// claim replaced by the fallback.
func TestNodeOpenAIResponses(t *testing.T) {
	t.Parallel()
	node, dir := testkit.NodeClient(t)
	a := newFixture(t, options{})
	b := newFixture(t, options{share: a})

	created := nodeResponses(t, node, dir, a.gateway, "u-node", "create", "hello")
	if created["ok"] != true || created["status"] != "completed" || created["text"] != helloAnswer {
		t.Fatalf("create: %v", created)
	}
	id := created["id"].(string)

	streamed := nodeResponses(t, node, dir, a.gateway, "u-node", "stream", "hello")
	types, _ := streamed["types"].([]any)
	if streamed["ok"] != true || streamed["text"] != helloAnswer || streamed["status"] != "completed" || len(types) < 4 ||
		types[0] != "response.created" || types[len(types)-1] != "response.completed" ||
		!slices.Contains(types, any("response.output_text.delta")) {
		t.Fatalf("stream: %v", streamed)
	}

	continued := nodeResponses(t, node, dir, b.gateway, "u-node", "continue", id, "and again")
	if continued["ok"] != true || continued["previous"] != id || continued["text"] != helloAnswer {
		t.Fatalf("continue on the other replica: %v", continued)
	}
	if got := nodeResponses(t, node, dir, b.gateway, "u-node", "retrieve", id); got["ok"] != true || got["id"] != id || got["text"] != helloAnswer {
		t.Fatalf("retrieve on the other replica: %v", got)
	}
	// The continuation's input items, read through the client's paginated
	// list on the other replica: the whole conversation it answered,
	// newest first (docs/chat.md, "Input items").
	items := nodeResponses(t, node, dir, b.gateway, "u-node", "items", continued["id"].(string))
	if list, _ := items["items"].([]any); items["ok"] != true || fmt.Sprint(list) !=
		"[map[role:user type:message] map[role:assistant type:message] map[role:user type:message]]" {
		t.Errorf("input items: %v, want the new message, the answer before it and the first message", items)
	}
	for _, scenario := range [][]string{{"retrieve", id}, {"items", id}, {"delete", id}, {"continue", id, "hi"}} {
		if got := nodeResponses(t, node, dir, a.gateway, "u-other", scenario...); got["ok"] != false || got["status"] != float64(404) || got["name"] != "NotFoundError" {
			t.Errorf("%s as another user: %v, want the client's NotFoundError", scenario[0], got)
		}
	}
	if got := nodeResponses(t, node, dir, a.gateway, "u-node", "delete", id); got["ok"] != true {
		t.Fatalf("delete: %v", got)
	}
	if got := nodeResponses(t, node, dir, b.gateway, "u-node", "retrieve", id); got["status"] != float64(404) {
		t.Errorf("retrieve after delete: %v, want 404", got)
	}

	claim := nodeResponses(t, node, dir, a.gateway, "u-claim", "create", "ideas for breakfast?")
	if text, _ := claim["text"].(string); claim["ok"] != true || !strings.HasSuffix(text, safety.Fallback) || strings.Contains(text, "cures") {
		t.Errorf("a claim: %v, want the text cut before it and the fallback", claim)
	}
}

// nodeAgents runs testdata/node/agents.mjs once: the OpenAI Agents SDK
// running its agent through gateway as user.
func nodeAgents(t *testing.T, node, dir, gateway, user, mode string) map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "agents.mjs", gateway+"/v1", user, mode, "What's the weather in Paris?")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node agents.mjs %s: %v\n%s", mode, err, out)
	}
	var got map[string]any
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("node printed %q: %v", out, err)
	}
	return got
}

// TestNodeAgentsSDK: @openai/agents, unchanged, with voxgate as its
// default OpenAI client, runs an agent with one function tool, whole and
// streamed: the model calls the tool, the tool runs once in the agent
// (never in voxgate), its output goes back and the final answer
// arrives; the ledger has one record of kind response per model call,
// for that user.
func TestNodeAgentsSDK(t *testing.T) {
	t.Parallel()
	node, dir := testkit.NodeClient(t)
	f := newFixture(t, options{})
	for _, mode := range []string{"run", "stream"} {
		user := "u-agent-" + mode
		got := nodeAgents(t, node, dir, f.gateway, user, mode)
		ran, _ := got["ran"].([]any)
		if got["ok"] != true || got["output"] != weatherAnswer || len(ran) != 1 || ran[0] != "Paris" || got["turns"] != float64(2) {
			t.Errorf("%s: %v, want the tool run once for Paris and the answer %q after two model calls", mode, got, weatherAnswer)
		}
		if mode == "stream" {
			types, _ := got["types"].([]any)
			if !slices.Contains(types, any("response.output_text.delta")) || !slices.Contains(types, any("response.function_call_arguments.done")) {
				t.Errorf("stream: the agent saw %v", types)
			}
		}
		recs := f.records(t, user)
		if len(recs) != 2 || recs[0].Kind != billing.KindResponse || recs[1].Kind != billing.KindResponse ||
			recs[0].Usage.TextOut == 0 || recs[1].Usage.TextOut == 0 {
			t.Errorf("%s: ledger %+v, want two response records with output", mode, recs)
		}
	}
}

// TestNodeOpenAIRefusals: the Node openai client raises voxgate's
// refusals as its APIError subclasses with their status: the quota's 429
// (RateLimitError, code QUOTA_EXCEEDED), whole and on a stream request
// (refused before the stream begins), and an answer the output filter
// withholds for personal data, 422 (UnprocessableEntityError, code
// AI_PII_LEAK); nothing of the withheld answer reaches the client.
func TestNodeOpenAIRefusals(t *testing.T) {
	t.Parallel()
	node, dir := testkit.NodeClient(t)
	f := newFixture(t, options{})
	big := strings.Repeat("oats ", 48_000/5) // more than the free plan's day
	for _, c := range []struct {
		scenario, user, message string
		name                    string
		status                  float64
		code                    string
	}{
		{"create", "u-node-quota", big, "RateLimitError", 429, "QUOTA_EXCEEDED"},
		{"stream", "u-node-quota-stream", big, "RateLimitError", 429, "QUOTA_EXCEEDED"},
		{"create", "u-node-leak", "Who is my coach?", "UnprocessableEntityError", 422, "AI_PII_LEAK"},
	} {
		got := nodeResponses(t, node, dir, f.gateway, c.user, c.scenario, c.message)
		if got["ok"] != false || got["apiError"] != true || got["name"] != c.name || got["status"] != c.status || got["code"] != c.code {
			t.Errorf("%s as %s: %v, want %s (%v, %s)", c.scenario, c.user, got, c.name, c.status, c.code)
		}
		if msg, _ := got["message"].(string); strings.Contains(msg, leakEmail) {
			t.Errorf("%s: the withheld address reached the client: %q", c.user, msg)
		}
	}
	if recs := f.records(t, "u-node-quota"); len(recs) != 0 {
		t.Errorf("the refused request recorded %+v", recs)
	}
	// Streamed, the leak is the spec's in-stream error event after
	// response.created: the client's ResponseStream rejects with that
	// event as it came (a plain object, not an APIError: the SDK's way
	// with any error event, OpenAI's own included), carrying the code.
	got := nodeResponses(t, node, dir, f.gateway, "u-node-leak-stream", "stream", "Who is my coach?")
	if got["ok"] != false || got["code"] != "AI_PII_LEAK" || got["status"] != nil {
		t.Errorf("streamed leak: %v, want the error event with code AI_PII_LEAK", got)
	}
	if msg, _ := got["message"].(string); msg == "" || strings.Contains(msg, leakEmail) {
		t.Errorf("streamed leak: message %q, want one without the withheld address", msg)
	}
}
