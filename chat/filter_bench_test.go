package chat_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"

	"github.com/voxgate/voxgate/chat"
	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/internal/latency"
	"github.com/voxgate/voxgate/internal/testgraph"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// firstSentence is the answer's first sentence in BenchmarkFirstContentFiltered.
const firstSentence = "Here is a simple plan for the week. "

// directSentence streams the answer straight from the simulator and
// returns the time to its first content and to the end of its first
// sentence (the chunk that brings the space after its full stop).
func directSentence(client openai.Client, n int) (first, sentence time.Duration, err error) {
	began := time.Now()
	s := client.Chat.Completions.NewStreaming(context.Background(), openai.ChatCompletionNewParams{
		Model:    config.DefaultChat().Model,
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(fmt.Sprintf("plan %d", n))},
	})
	defer s.Close()
	var text strings.Builder
	for s.Next() {
		c := s.Current()
		if len(c.Choices) == 0 || c.Choices[0].Delta.Content == "" {
			continue
		}
		if first == 0 {
			first = time.Since(began)
		}
		text.WriteString(c.Choices[0].Delta.Content)
		if sentence == 0 && strings.HasPrefix(text.String(), firstSentence) {
			sentence = time.Since(began)
		}
	}
	return first, sentence, s.Err()
}

func postChat(url, token, body string) (*http.Response, error) {
	req, _ := http.NewRequest(http.MethodPost, url+"/v1/chat", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	return http.DefaultClient.Do(req)
}

// gatewayFirst is the time to the first content event of a chat turn.
func gatewayFirst(url string, tokens []string, n int) (time.Duration, error) {
	body := fmt.Sprintf(`{"message":"plan %d"}`, n)
	began := time.Now()
	resp, err := postChat(url, tokens[n%len(tokens)], body)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var took time.Duration
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if took == 0 && sc.Text() == "event: content" {
			took = time.Since(began)
		}
	}
	if took == 0 {
		return 0, fmt.Errorf("no content (status %d)", resp.StatusCode)
	}
	return took, nil
}

// BenchmarkFirstContentFiltered: what the output filter's holding back
// costs the time to first content. One stream, turns alternating in one
// run: through the gateway with the filter on, with it off, and straight
// from the simulator, which also gives the time from the first token to
// the end of the first sentence. The model answers like a fast real one
// (50 ms to the first token, 200 tokens a second, a token per chunk).
// DESIGN §12's bound: filter on minus filter off is at most the first
// sentence's time (reported as added-ms and sentence-ms).
func BenchmarkFirstContentFiltered(b *testing.B) {
	cfg := sim.Config{Latency: &sim.Latency{TTFT: 50 * time.Millisecond, TokensPerSecond: 200, ChunkTokens: 1},
		Script: sim.Script{Rules: []sim.Rule{{When: sim.When{Contains: []string{"plan"}},
			Reply: sim.Reply{Text: firstSentence + "Start the day with oats and berries. ", TextTokens: 60}}}}}
	f := newFixture(b, options{plans: benchPlan, simCfg: &cfg, poolSize: 20, production: true, noContextTool: true})
	client := simtest.Client(f.simURL)
	tokens := []string{testgraph.Token(b, "bench-filter", "bench")}
	n := max(b.N, 3)
	on, off, first, sentence := make([]time.Duration, n), make([]time.Duration, n), make([]time.Duration, n), make([]time.Duration, n)
	run := func(i int) {
		var err error
		chat.SetOutputFilter(f.svc, true)
		if on[i], err = gatewayFirst(f.url, tokens, i); err != nil {
			b.Fatal(err)
		}
		chat.SetOutputFilter(f.svc, false)
		if off[i], err = gatewayFirst(f.url, tokens, i); err != nil {
			b.Fatal(err)
		}
		chat.SetOutputFilter(f.svc, true)
		if first[i], sentence[i], err = directSentence(client, i); err != nil {
			b.Fatal(err)
		}
	}
	run(0) // untimed: dials the pools, creates the user's quota rows
	b.ResetTimer()
	for i := range n {
		run(i)
	}
	b.StopTimer()
	took := make([]time.Duration, n)
	for i := range n {
		took[i] = sentence[i] - first[i]
	}
	for _, s := range [][]time.Duration{on, off, first, took} {
		slices.Sort(s)
	}
	b.ReportMetric(latency.Millis(b, on, .5), "on-p50-ms")
	b.ReportMetric(latency.Millis(b, off, .5), "off-p50-ms")
	b.ReportMetric(latency.Millis(b, on, .5)-latency.Millis(b, off, .5), "added-p50-ms")
	b.ReportMetric(latency.Millis(b, took, .5), "sentence-p50-ms")
	b.ReportMetric(latency.Millis(b, first, .5), "direct-p50-ms")
}
