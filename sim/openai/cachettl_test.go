package openai_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// clock is a settable time for the simulator.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// long is 5,000 bytes of system prompt: with "hello" a 1,252-token prompt
// whose first 9 blocks (1,152 tokens) the cache keeps.
func long(lead string) string { return lead + strings.Repeat("abcd", 1250)[len(lead):] }

func ask(model, system string, edit func(*openai.ChatCompletionNewParams)) openai.ChatCompletionNewParams {
	p := openai.ChatCompletionNewParams{Model: model,
		Messages: []openai.ChatCompletionMessageParamUnion{openai.SystemMessage(system), openai.UserMessage("hello")}}
	if edit != nil {
		edit(&p)
	}
	return p
}

func ttl(v string) func(*openai.ChatCompletionNewParams) {
	return func(p *openai.ChatCompletionNewParams) { p.PromptCacheOptions.Ttl = v }
}

// prompt_cache_options.ttl keeps a written prefix at least that long
// (past the cache's own 5 minutes), cache_write_tokens counts the write
// with no split by TTL, and a ttl outside the enum is the API's 400.
func TestPromptCacheTTL(t *testing.T) {
	t.Parallel()
	clk := &clock{now: time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC)}
	_, ts := simtest.NewServer(t, sim.Config{Now: clk.Now, Latency: simtest.ZeroLatency()})
	client := simtest.Client(ts.URL)
	ctx := context.Background()
	call := func(name string, p openai.ChatCompletionNewParams) openai.CompletionUsage {
		t.Helper()
		resp, err := client.Chat.Completions.New(ctx, p)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return resp.Usage
	}
	a, b, c := long("a"), long("b"), long("c")
	for _, s := range []struct{ system, ttl string }{{a, "12h"}, {b, "30m"}, {c, ""}} {
		u := call("write "+s.ttl, ask("gpt-6.2-sol", s.system, ttl(s.ttl)))
		if u.PromptTokens != 1252 || u.PromptTokensDetails.CacheWriteTokens != 1152 || u.PromptTokensDetails.CachedTokens != 0 {
			t.Fatalf("ttl %q: usage %+v, want 1252 prompt tokens, 1152 written", s.ttl, u.PromptTokensDetails)
		}
	}
	clk.advance(20 * time.Minute)
	for _, s := range []struct {
		system string
		want   int64
	}{{a, 1152}, {b, 1152}, {c, 0}} {
		if got := call("20 min on", ask("gpt-6.2-sol", s.system, nil)).PromptTokensDetails.CachedTokens; got != s.want {
			t.Errorf("20 minutes on: cached %d, want %d", got, s.want)
		}
	}
	// The reads above refreshed a and b under the cache's own 5 minutes,
	// which does not shorten what a write asked.
	clk.advance(11 * time.Hour)
	if got := call("11 h on", ask("gpt-6.2-sol", a, nil)).PromptTokensDetails.CachedTokens; got != 1152 {
		t.Errorf("a 12 h write read 11 h later: cached %d, want 1152", got)
	}
	if got := call("11 h on", ask("gpt-6.2-sol", b, nil)).PromptTokensDetails; got.CachedTokens != 0 || got.CacheWriteTokens != 1152 {
		t.Errorf("a 30 min write read 11 h later: %+v, want nothing cached and the prefix written again", got)
	}

	for _, bad := range []func(*openai.ChatCompletionNewParams){
		ttl("1h"),
		func(p *openai.ChatCompletionNewParams) { p.PromptCacheOptions.Mode = "sometimes" },
	} {
		_, err := client.Chat.Completions.New(ctx, ask("gpt-6.2-sol", "hi", bad))
		var apiErr *openai.Error
		if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || !strings.HasPrefix(apiErr.Param, "prompt_cache_options.") || apiErr.Code != "invalid_value" {
			t.Errorf("a bad option: %v, want a 400 invalid_value on prompt_cache_options", err)
		}
	}
}

// The response names the tier that served it: as asked, "fast" as
// priority, the project's tier for "auto" or none, streamed and whole; a
// tier outside the enum is the API's 400.
func TestServiceTierAnswered(t *testing.T) {
	t.Parallel()
	_, ts := simtest.NewServer(t, sim.Config{Latency: simtest.ZeroLatency()})
	_, flexProject := simtest.NewServer(t, sim.Config{Latency: simtest.ZeroLatency(), Chat: sim.Chat{ProjectServiceTier: "flex"}})
	ctx := context.Background()
	for _, c := range []struct {
		url, asked, want string
	}{
		{ts.URL, "", "default"}, {ts.URL, "auto", "default"}, {ts.URL, "default", "default"},
		{ts.URL, "flex", "flex"}, {ts.URL, "priority", "priority"}, {ts.URL, "fast", "priority"},
		{flexProject.URL, "", "flex"}, {flexProject.URL, "auto", "flex"}, {flexProject.URL, "priority", "priority"},
	} {
		client := simtest.Client(c.url)
		p := ask("gpt-6-luna", "hi", func(p *openai.ChatCompletionNewParams) {
			p.ServiceTier = openai.ChatCompletionNewParamsServiceTier(c.asked)
		})
		whole, err := client.Chat.Completions.New(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		if string(whole.ServiceTier) != c.want {
			t.Errorf("asked %q: whole answer's tier %q, want %q", c.asked, whole.ServiceTier, c.want)
		}
		stream := client.Chat.Completions.NewStreaming(ctx, p)
		n := 0
		for stream.Next() {
			if got := string(stream.Current().ServiceTier); got != c.want {
				t.Errorf("asked %q: chunk's tier %q, want %q", c.asked, got, c.want)
			}
			n++
		}
		if stream.Err() != nil || n == 0 {
			t.Fatalf("asked %q: stream of %d chunks, %v", c.asked, n, stream.Err())
		}
	}
	client := simtest.Client(ts.URL)
	_, err := client.Chat.Completions.New(ctx, ask("gpt-6-luna", "hi", func(p *openai.ChatCompletionNewParams) {
		p.ServiceTier = "turbo"
	}))
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || apiErr.Param != "service_tier" {
		t.Errorf("tier turbo: %v, want a 400 on service_tier", err)
	}
}

// The organization's costs bill a 12 h write at its own rate and the
// whole request at the tier's multiple: figures from the price list by
// hand, read with openai-go's admin types.
func TestOrgCostTTLAndTier(t *testing.T) {
	t.Parallel()
	day := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name, ttl, tier string
		// hand: micro-USD of the request given its output tokens, in
		// halves of a micro-dollar (flex halves everything).
		halves func(out int64) int64
	}{
		// 100 uncached × $2.00 + 1,152 written × $5.00 + out × $10.00,
		// all × 0.5.
		{"12 h write on flex", "12h", "flex", func(out int64) int64 { return 100*2 + 1152*5 + out*10 }},
		// 100 × $2.00 + 1,152 × $2.50 + out × $10.00, all × 2.
		{"30 min write on priority", "30m", "priority", func(out int64) int64 { return 4 * (100*2 + 1152*25/10 + out*10) }},
		// 100 × $2.00 + 1,152 × $5.00 + out × $10.00.
		{"12 h write on default", "12h", "default", func(out int64) int64 { return 2 * (100*2 + 1152*5 + out*10) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, ts := simtest.NewServer(t, sim.Config{Now: func() time.Time { return day.Add(time.Hour) }, Latency: simtest.ZeroLatency()})
			client := simtest.Client(ts.URL, option.WithAdminAPIKey(simtest.TestKey))
			resp, err := client.Chat.Completions.New(context.Background(), ask("gpt-6.2-sol", long("x"), func(p *openai.ChatCompletionNewParams) {
				p.PromptCacheOptions.Ttl = c.ttl
				p.ServiceTier = openai.ChatCompletionNewParamsServiceTier(c.tier)
			}))
			if err != nil {
				t.Fatal(err)
			}
			if resp.Usage.PromptTokensDetails.CacheWriteTokens != 1152 || string(resp.ServiceTier) != c.tier {
				t.Fatalf("usage %+v on %q", resp.Usage.PromptTokensDetails, resp.ServiceTier)
			}
			want := (c.halves(resp.Usage.CompletionTokens) + 1) / 2 // half up
			costs, err := client.Admin.Organization.Usage.Costs(context.Background(), openai.AdminOrganizationUsageCostsParams{
				StartTime: day.Unix(), EndTime: openai.Int(day.Add(24 * time.Hour).Unix())})
			if err != nil || len(costs.Data) != 1 || len(costs.Data[0].Results) != 1 {
				t.Fatalf("costs %+v, %v", costs, err)
			}
			if got := int64(math.Round(costs.Data[0].Results[0].Amount.Value * 1e6)); got != want {
				t.Errorf("cost %d micro-USD, want %d", got, want)
			}
		})
	}
}
