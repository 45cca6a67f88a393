package completions_test

import (
	"context"
	"errors"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/voxgate/voxgate/sim"
)

// TestCompletionsMetrics: every completion request is counted by route and
// outcome, and an answer's first byte is timed, streamed and not; a model
// that names no route is counted under "unknown", never under its name.
func TestCompletionsMetrics(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	c := newComplFixture(t, func(o *options) { o.registry = reg })
	if got := c.stream(t, "u1", "solo", "hello"); got.err != nil {
		t.Fatal(got.err)
	}
	if _, err := c.client("u1", "").Chat.Completions.New(context.Background(),
		openai.ChatCompletionNewParams{Model: "solo", Messages: ask("hello")}); err != nil {
		t.Fatal(err)
	}
	_, err := c.client("u1", "").Chat.Completions.New(context.Background(),
		openai.ChatCompletionNewParams{Model: "no-such-route", Messages: ask("hello")})
	if ae := (*openai.Error)(nil); !errors.As(err, &ae) || ae.StatusCode != 404 {
		t.Fatalf("an unknown model: got %v, want 404", err)
	}
	c.primary.fault(t, sim.Fault{Kind: sim.FaultCutStream, AfterChunks: 3})
	if got := c.stream(t, "u1", "solo", "hello"); got.err == nil {
		t.Fatal("a cut stream: got no error")
	}
	c.primary.fault(t, sim.Fault{Kind: sim.FaultContentFilter})
	if got := c.stream(t, "u1", "solo", "hello"); got.err == nil {
		t.Fatal("a content filter: got no error")
	}
	counts := gather(t, reg, "voxgate_chat_completions_total", "route", "outcome")
	want := map[string]float64{"solo ok": 2, "unknown NOT_FOUND": 1, "solo AI_UNAVAILABLE": 1, "solo AI_CONTENT_FILTERED": 1}
	if len(counts) != len(want) {
		t.Errorf("completions_total %v, want %v", counts, want)
	}
	for k, v := range want {
		if counts[k] != v {
			t.Errorf("completions_total{%s} = %v, want %v (all: %v)", k, counts[k], v, counts)
		}
	}
	// The first byte of the two answers and of the cut one (its first chunk
	// went out); the refusals before any byte have none.
	first := gather(t, reg, "voxgate_chat_completion_first_byte_seconds", "route", "stream")
	if first["solo true"] != 2 || first["solo false"] != 1 || len(first) != 2 {
		t.Errorf("first-byte observations %v, want 2 streamed and 1 whole on solo", first)
	}
}

// gather sums name's series in reg by the values of labels, joined by a
// space: a counter's value, a histogram's count of observations.
func gather(t *testing.T, reg *prometheus.Registry, name string, labels ...string) map[string]float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			values := map[string]string{}
			for _, l := range m.GetLabel() {
				values[l.GetName()] = l.GetValue()
			}
			key := ""
			for i, l := range labels {
				if i > 0 {
					key += " "
				}
				key += values[l]
			}
			switch {
			case m.GetCounter() != nil:
				out[key] += m.GetCounter().GetValue()
			case m.GetHistogram() != nil:
				out[key] += float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return out
}
