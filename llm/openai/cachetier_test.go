package openai_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/llm/openai"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// bodies records the request bodies an adapter sends.
type bodies struct {
	mu   sync.Mutex
	sent [][]byte
}

func (b *bodies) RoundTrip(req *http.Request) (*http.Response, error) {
	body, _ := io.ReadAll(req.Body)
	req.Body = io.NopCloser(bytes.NewReader(body))
	b.mu.Lock()
	b.sent = append(b.sent, body)
	b.mu.Unlock()
	return http.DefaultTransport.RoundTrip(req)
}

func (b *bodies) last() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.sent[len(b.sent)-1])
}

// longPrompt is a 1,252-token prompt whose first 1,152 tokens the
// simulator's cache writes (sim/openai's cache tests), its system text
// led by lead so each call writes afresh.
func longPrompt(lead string, ttl string, whole bool) llm.Request {
	system := lead + strings.Repeat("abcd", 1250)[len(lead):]
	return llm.Request{Model: "gpt-6.2-sol", Whole: whole, PromptCacheTTL: ttl,
		Messages: []llm.Message{{Role: llm.RoleSystem, Content: system}, {Role: llm.RoleUser, Content: "hello"}}}
}

// usageOf reads s to its end and returns the usage it reported.
func usageOf(t *testing.T, s llm.Stream) *llm.Usage {
	t.Helper()
	defer s.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	for {
		ev, err := s.Next(ctx)
		if errors.Is(err, io.EOF) {
			t.Fatal("the stream ended without EventDone")
		}
		if err != nil {
			t.Fatal(err)
		}
		if ev.Kind == llm.EventDone {
			if ev.Usage == nil {
				t.Fatal("EventDone without usage")
			}
			return ev.Usage
		}
	}
}

// A target's cache TTL is sent as prompt_cache_options.ttl, and the
// usage says which of its cache writes were made for 12 hours (all of
// them, under "12h": the API's usage does not split them); the tier the
// response names is the usage's, streamed and whole.
func TestCacheTTLSentAndTierRead(t *testing.T) {
	t.Parallel()
	_, ts := simtest.NewServer(t, sim.Config{Latency: simtest.ZeroLatency(), Chat: sim.Chat{ProjectServiceTier: "priority"}})
	rec := &bodies{}
	o, err := openai.New(openai.Params{BaseURL: ts.URL + "/v1", APIKey: simtest.TestKey, HTTPClient: &http.Client{Transport: rec}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, ttl string
		whole     bool
		sent      string // in the body, or "" for no prompt_cache_options
		want12h   int64
	}{
		{"12 h, streamed", "12h", false, `"prompt_cache_options":{"ttl":"12h"}`, 1152},
		{"12 h, whole", "12h", true, `"prompt_cache_options":{"ttl":"12h"}`, 1152},
		{"30 min", "30m", false, `"prompt_cache_options":{"ttl":"30m"}`, 0},
		{"none asked", "", true, "", 0},
	} {
		s, err := o.Stream(t.Context(), longPrompt(c.name, c.ttl, c.whole))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		u := usageOf(t, s)
		body := rec.last()
		switch {
		case c.sent != "" && !strings.Contains(body, c.sent):
			t.Errorf("%s: body lacks %s: %.200s", c.name, c.sent, body)
		case c.sent == "" && strings.Contains(body, "prompt_cache_options"):
			t.Errorf("%s: a target with no TTL sent prompt_cache_options", c.name)
		}
		if u.CacheWriteInputTokens != 1152 || u.CacheWrite12hInputTokens != c.want12h || u.ServiceTier != "priority" {
			t.Errorf("%s: usage %+v, want 1152 writes of which %d for 12 h, tier priority", c.name, *u, c.want12h)
		}
	}
	if _, err := o.Stream(t.Context(), longPrompt("bad", "1h", false)); err == nil {
		t.Error("a TTL that is not 30m or 12h was sent")
	}
}
