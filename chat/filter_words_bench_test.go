package chat_test

import (
	"context"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/voxgate/voxgate/chat"
	"github.com/voxgate/voxgate/internal/latency"
	"github.com/voxgate/voxgate/internal/testgraph"
	"github.com/voxgate/voxgate/llm"
)

// riskFree is a 30-word answer with no risk-lexicon word, the sentence
// issue 37 measured.
const riskFree = "Here is a simple plan for the week with easy dinners, a short shopping list and a few ideas " +
	"for lunches you can pack the night before and take along."

// wordProvider answers every call with riskFree, one word per delta,
// every gap after the first: an upstream that streams a word every 20 ms.
// With leading spaces ("Here", " is", …) as a model's tokens start with
// their space, a word's end arrives with the next word; with trailing
// ones ("Here ", "is ", …) it arrives with the word.
type wordProvider struct {
	gap      time.Duration
	trailing bool
}

func (wordProvider) Name() string { return "words" }

func (p wordProvider) Stream(context.Context, llm.Request) (llm.Stream, error) {
	words := strings.SplitAfter(riskFree, " ")
	deltas := make([]string, len(words))
	for i, w := range words {
		deltas[i] = w
		if p.trailing {
			continue
		}
		deltas[i] = strings.TrimSuffix(w, " ")
		if i > 0 {
			deltas[i] = " " + deltas[i]
		}
	}
	return &wordStream{gap: p.gap, deltas: deltas}, nil
}

type wordStream struct {
	gap    time.Duration
	deltas []string
	i      int
	done   bool
}

func (s *wordStream) Next(ctx context.Context) (llm.Event, error) {
	if s.i < len(s.deltas) {
		t := time.NewTimer(s.gap)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return llm.Event{}, ctx.Err()
		case <-t.C:
		}
		s.i++
		return llm.Event{Kind: llm.EventText, Text: s.deltas[s.i-1]}, nil
	}
	if s.done {
		return llm.Event{}, io.EOF
	}
	s.done = true
	return llm.Event{Kind: llm.EventDone, FinishReason: "stop",
		Usage: &llm.Usage{InputTokens: 40, OutputTokens: int64(len(s.deltas))}}, nil
}

func (s *wordStream) Close() error { return nil }

// BenchmarkFirstContentWordByWord is issue 37's benchmark: an upstream
// that streams one word every 20 ms, a 30-word answer with no risk word,
// turns through the gateway alternating with the output filter on and
// off in one run. added-p50-ms is what the filter adds to the time to
// first content (issue 37's target: ≤ 2 ms); word-ms is the upstream's
// gap, for scale. The filter lets a word out once the space that ends it
// has arrived (release.go), so the two spacings are measured apart.
func BenchmarkFirstContentWordByWord(b *testing.B) {
	for _, tc := range []struct {
		name     string
		trailing bool
	}{{"leading-space", false}, {"trailing-space", true}} {
		b.Run(tc.name, func(b *testing.B) { firstContentWords(b, tc.trailing) })
	}
}

func firstContentWords(b *testing.B, trailing bool) {
	const gap = 20 * time.Millisecond
	f := newFixture(b, options{plans: benchPlan, poolSize: 20, production: true, noContextTool: true,
		provider: func(llm.Provider) llm.Provider { return wordProvider{gap: gap, trailing: trailing} }})
	tokens := []string{testgraph.Token(b, "bench-words", "bench")}
	n := max(b.N, 3)
	on, off := make([]time.Duration, n), make([]time.Duration, n)
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
	}
	run(0) // untimed: dials the pools, creates the user's quota rows
	b.ResetTimer()
	for i := range n {
		run(i)
	}
	b.StopTimer()
	slices.Sort(on)
	slices.Sort(off)
	b.ReportMetric(latency.Millis(b, on, .5), "on-p50-ms")
	b.ReportMetric(latency.Millis(b, off, .5), "off-p50-ms")
	b.ReportMetric(latency.Millis(b, on, .5)-latency.Millis(b, off, .5), "added-p50-ms")
	b.ReportMetric(float64(gap.Milliseconds()), "word-ms")
}
