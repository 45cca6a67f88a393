package sim_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/voxgate/voxgate/internal/testkit"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// longSystem is 5,000 bytes, 1,250 tokens: with a 5-byte user message the
// prompt is 5,005 bytes (1,252 tokens) and holds 9 whole 128-token blocks.
var longSystem = strings.Repeat("abcd", 1250)

// cachedBody is a request whose prompt is system then user.
func cachedBody(model, system, user, extra string) string {
	s, _ := json.Marshal(system)
	u, _ := json.Marshal(user)
	body := `{"model":"` + model + `","messages":[{"role":"system","content":` + string(s) + `},{"role":"user","content":` + string(u) + `}]`
	if extra != "" {
		body += "," + extra
	}
	return body + "}"
}

// usageOfBody returns the usage of a completion, or of a stream's last chunk.
func usageOfBody(t *testing.T, body []byte) (prompt, cached int) {
	t.Helper()
	if events := sseData(t, body); len(events) > 1 {
		body = []byte(events[len(events)-2])
	}
	var got struct {
		Usage struct {
			PromptTokens        int `json:"prompt_tokens"`
			PromptTokensDetails struct {
				CachedTokens int `json:"cached_tokens"`
			} `json:"prompt_tokens_details"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatalf("usage of %s: %v", body, err)
	}
	return got.Usage.PromptTokens, got.Usage.PromptTokensDetails.CachedTokens
}

// TestCachedPromptTokens runs one key's requests in order and checks which
// leading tokens each reports as cached.
func TestCachedPromptTokens(t *testing.T) {
	t.Parallel()
	spec := simtest.Spec(t)
	clock := newTestClock()
	_, url := testkit.NewSim(t, sim.Config{Now: clock.Now, Chat: sim.Chat{PromptCache: sim.PromptCache{TTL: 10 * time.Minute}}})
	steps := []struct {
		name       string
		advance    time.Duration
		key, body  string
		wantPrompt int
		wantCached int
	}{
		{"first sight", 0, "sk-a", cachedBody("gpt-4o", longSystem, "hello", ""), 1252, 0},
		{"the same prompt: 9 whole blocks", 0, "sk-a", cachedBody("gpt-4o", longSystem, "hello", ""), 1252, 1152},
		{"a new last message keeps the prefix", 0, "sk-a", cachedBody("gpt-4o", longSystem, "bye", ""), 1251, 1152},
		{"streamed, with usage", 0, "sk-a", cachedBody("gpt-4o", longSystem, "hello", `"stream":true,"stream_options":{"include_usage":true}`), 1252, 1152},
		{"the snapshot shares its alias's cache", 0, "sk-a", cachedBody("gpt-4o-2024-08-06", longSystem, "hello", ""), 1252, 1152},
		{"another model has its own cache", 0, "sk-a", cachedBody("gpt-4o-mini", longSystem, "hello", ""), 1252, 0},
		{"another key has its own cache", 0, "sk-b", cachedBody("gpt-4o", longSystem, "hello", ""), 1252, 0},
		{"the same text under another role", 0, "sk-a", `{"model":"gpt-4o","messages":[{"role":"user","content":"` + longSystem + `"},{"role":"user","content":"hello"}]}`, 1252, 0},
		{"a different start", 0, "sk-a", cachedBody("gpt-4o", "x"+longSystem[1:], "hello", ""), 1252, 0},
		{"a longer conversation caches more", 0, "sk-a", cachedBody("gpt-4o", longSystem, "hello"+strings.Repeat("e", 1000), ""), 1502, 1152},
		{"and is cached in turn", 0, "sk-a", cachedBody("gpt-4o", longSystem, "hello"+strings.Repeat("e", 1000), ""), 1502, 1408},
		{"within the TTL of the last use", 9 * time.Minute, "sk-a", cachedBody("gpt-4o", longSystem, "hello", ""), 1252, 1152},
		{"still, as that use refreshed it", 9 * time.Minute, "sk-a", cachedBody("gpt-4o", longSystem, "hello", ""), 1252, 1152},
		{"expired after the TTL", 11 * time.Minute, "sk-a", cachedBody("gpt-4o", longSystem, "hello", ""), 1252, 0},
		{"under 1,024 tokens nothing is cached", 0, "sk-a", cachedBody("gpt-4o", longSystem[:4000], "hello", ""), 1002, 0},
		{"even the second time", 0, "sk-a", cachedBody("gpt-4o", longSystem[:4000], "hello", ""), 1002, 0},
	}
	for _, st := range steps {
		clock.Advance(st.advance)
		resp, body := post(t, url, st.key, st.body)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: status %d %s", st.name, resp.StatusCode, body)
		}
		prompt, cached := usageOfBody(t, body)
		if prompt != st.wantPrompt || cached != st.wantCached {
			t.Errorf("%s: got %d prompt tokens, %d cached; want %d, %d", st.name, prompt, cached, st.wantPrompt, st.wantCached)
		}
		if !strings.Contains(st.body, `"stream"`) {
			if err := spec.Validate("CreateChatCompletionResponse", body); err != nil {
				t.Errorf("%s: %v", st.name, err)
			}
		}
	}

	// openai-go reads the count where a gateway bills it from.
	client := simtest.Client(url, option.WithAPIKey("sk-a"))
	got, err := client.Chat.Completions.New(t.Context(), openai.ChatCompletionNewParams{
		Model:    openai.ChatModelGPT4o,
		Messages: []openai.ChatCompletionMessageParamUnion{openai.SystemMessage(longSystem), openai.UserMessage("hello")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if c := got.Usage.PromptTokensDetails.CachedTokens; c != 1152 {
		t.Errorf("openai-go: cached tokens %d, want 1152", c)
	}
}

// TestPromptCacheBounded checks that the cache keeps at most MaxEntries
// blocks, dropping the least recently used.
func TestPromptCacheBounded(t *testing.T) {
	t.Parallel()
	// Each prompt below stores 2 entries (blocks 8 and 9).
	a, b := cachedBody("gpt-4o", longSystem, "hello", ""), cachedBody("gpt-4o", "b"+longSystem[1:], "hello", "")
	for _, tc := range []struct {
		max        int
		wantCached int
	}{{4, 1152}, {2, 0}} {
		_, url := testkit.NewSim(t, sim.Config{Chat: sim.Chat{PromptCache: sim.PromptCache{MaxEntries: tc.max}}})
		for _, body := range []string{a, b} {
			post(t, url, simtest.TestKey, body)
		}
		_, body := post(t, url, simtest.TestKey, a)
		if _, cached := usageOfBody(t, body); cached != tc.wantCached {
			t.Errorf("max_entries %d: a after b cached %d, want %d", tc.max, cached, tc.wantCached)
		}
	}
}

// TestPromptCacheConcurrent sends the same long prompt from many clients at
// once (run with -race): each sees 0 or the whole prefix, and afterwards
// the prefix is cached.
func TestPromptCacheConcurrent(t *testing.T) {
	t.Parallel()
	_, url := testkit.NewSim(t, sim.Config{})
	body := cachedBody("gpt-4o", longSystem, "hello", "")
	var wg sync.WaitGroup
	bodies := make([][]byte, 16)
	for i := range bodies {
		wg.Go(func() {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, url+"/v1/chat/completions", strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+simtest.TestKey)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			defer resp.Body.Close()
			bodies[i], _ = io.ReadAll(resp.Body)
		})
	}
	wg.Wait()
	for _, b := range bodies {
		if _, cached := usageOfBody(t, b); cached != 0 && cached != 1152 {
			t.Errorf("concurrent: cached %d, want 0 or 1152", cached)
		}
	}
	_, got := post(t, url, simtest.TestKey, body)
	if _, cached := usageOfBody(t, got); cached != 1152 {
		t.Errorf("after: cached %d, want 1152", cached)
	}
}
