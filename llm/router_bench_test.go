package llm_test

import (
	"context"
	"errors"
	"io"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/llm/openai"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// BenchmarkRouterFirstContent measures the time to first content of the
// same call made through the adapter and through a one-target route,
// alternating in one run, and reports both medians and their difference
// (the target: the router adds at most 0.2 ms).
//
//	go test ./llm -run '^$' -bench RouterFirstContent -benchtime 2000x
func BenchmarkRouterFirstContent(b *testing.B) {
	s, err := sim.New(sim.Config{Latency: simtest.ZeroLatency(), ShutdownDates: map[string]string{}})
	if err != nil {
		b.Fatal(err)
	}
	ts := httptest.NewServer(s)
	b.Cleanup(ts.Close)
	b.Cleanup(func() { _ = s.Close() })
	adapter, err := openai.New(openai.Params{BaseURL: ts.URL + "/v1", APIKey: simtest.TestKey})
	if err != nil {
		b.Fatal(err)
	}
	router, err := llm.NewRouter(llm.RouterParams{Providers: map[string]llm.Provider{"sim": adapter},
		Routes: []llm.Route{{Name: "bench", Targets: []llm.Target{{Provider: "sim", Model: primaryModel}}}}})
	if err != nil {
		b.Fatal(err)
	}
	var direct, routed []time.Duration
	for b.Loop() {
		direct = append(direct, firstContent(b, adapter, primaryModel))
		routed = append(routed, firstContent(b, router, "bench"))
	}
	d, r := median(direct), median(routed)
	b.ReportMetric(float64(d)/1e3, "adapter-p50-us")
	b.ReportMetric(float64(r)/1e3, "router-p50-us")
	b.ReportMetric(float64(r-d)/1e3, "added-p50-us")
}

// firstContent is the time from Stream to the first text; the stream is
// then read to its end, as a caller would.
func firstContent(b *testing.B, p llm.Provider, model string) time.Duration {
	ctx := context.Background()
	start := time.Now()
	st, err := p.Stream(ctx, userRequest(model, "hello"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	var first time.Duration
	for {
		ev, err := st.Next(ctx)
		if errors.Is(err, io.EOF) {
			return first
		}
		if err != nil {
			b.Fatal(err)
		}
		if first == 0 && ev.Kind == llm.EventText && ev.Text != "" {
			first = time.Since(start)
		}
	}
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}
