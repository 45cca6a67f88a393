package llm_test

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/llm/openai"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// A reasoning model silent for longer than the common first-chunk deadline
// is served when it has a deadline of its own; with one deadline for every
// model (the gateway's old fixed 10 s, scaled down here) the same healthy
// turn times out.
func TestReasoningModelFirstChunk(t *testing.T) {
	t.Parallel()
	const (
		common = 150 * time.Millisecond // every other model's deadline
		think  = 600 * time.Millisecond // the reasoning model's silence
	)
	_, url := newSim(t, sim.Config{Latency: &sim.Latency{ModelTTFT: map[string]time.Duration{"gpt-6.2-sol": think}}})
	cases := []struct {
		name       string
		model      string
		firstChunk map[string]time.Duration
		served     bool
	}{
		{"its own deadline", "gpt-6.2-sol", map[string]time.Duration{"gpt-6.2-sol": 30 * time.Second}, true},
		{"a snapshot under its family's deadline", "gpt-6.2-sol-2026-10-01", map[string]time.Duration{"gpt-6.2-sol": 30 * time.Second}, true},
		{"the common deadline for every model", "gpt-6.2-sol", nil, false},
		{"the defaults", "gpt-6.2-sol", llm.DefaultFirstChunkTimeouts(), true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o, err := openai.New(openai.Params{BaseURL: url, APIKey: simtest.TestKey, Timeout: common, FirstChunk: tc.firstChunk})
			if err != nil {
				t.Fatal(err)
			}
			st, err := o.Stream(t.Context(), userRequest(tc.model, "plan my week of meals"))
			if !tc.served {
				var e *llm.Error
				if !errors.As(err, &e) || e.Code != llm.ProviderTimeout {
					t.Fatalf("got %v, want %s", err, llm.ProviderTimeout)
				}
				return
			}
			if err != nil {
				t.Fatalf("Stream: %v", err)
			}
			r := drain(t, st)
			if r.err != nil || r.text == "" {
				t.Fatalf("got text %q, err %v; want a whole answer", r.text, r.err)
			}
		})
	}
}

func TestFirstChunkTimeoutLookup(t *testing.T) {
	t.Parallel()
	o, err := openai.New(openai.Params{BaseURL: "http://127.0.0.1:1/v1", APIKey: "k", Timeout: 7 * time.Second,
		FirstChunk: map[string]time.Duration{"gpt-6.2-sol": time.Minute}})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		model string
		want  time.Duration
	}{
		{"gpt-6.2-sol", time.Minute},
		{"gpt-6.2-sol-2026-10-01", time.Minute},
		{"gpt-6-luna", 7 * time.Second},
	}
	for _, tc := range cases {
		if got := o.FirstChunkTimeout(tc.model); got != tc.want {
			t.Errorf("%s: got %s, want %s", tc.model, got, tc.want)
		}
	}
	for _, bad := range []map[string]time.Duration{{"m": 0}, {"m": -time.Second}, {"": time.Second}} {
		if _, err := openai.New(openai.Params{BaseURL: "http://x/v1", APIKey: "k", FirstChunk: bad}); err == nil {
			t.Errorf("FirstChunk %v: got nil error", bad)
		}
	}
}

// gpt-6-luna takes tools over Chat Completions only at reasoning_effort
// "none" (the simulator refuses it otherwise, as the model page says):
// the adapter sends "none" when the request brings tools and no effort.
func TestToolsNeedNoReasoning(t *testing.T) {
	t.Parallel()
	_, url := newSim(t, sim.Config{})
	cases := []struct {
		name, model, effort string
		tools               bool
		want                any // reasoning_effort sent; nil: absent
	}{
		{"luna with tools", "gpt-6-luna", "", true, "none"},
		{"luna snapshot with tools", "gpt-6-luna-2026-09-01", "", true, "none"},
		{"luna without tools", "gpt-6-luna", "", false, nil},
		{"sol with tools", "gpt-6.2-sol", "", true, nil},
		{"an effort of the config", "gpt-6.1-terra", "low", true, "low"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec := &recorder{}
			req := userRequest(tc.model, "hi")
			req.ReasoningEffort = tc.effort
			if tc.tools {
				req.Tools = []llm.ToolSpec{recipeTool}
			}
			st, err := newOpenAI(t, url, 0, rec).Stream(t.Context(), req)
			if err != nil {
				t.Fatalf("Stream: %v", err)
			}
			if r := drain(t, st); r.err != nil {
				t.Fatalf("stream: %v", r.err)
			}
			var body any
			if err := json.Unmarshal(rec.last(t), &body); err != nil {
				t.Fatal(err)
			}
			if got, _ := jsonPath(body, "reasoning_effort"); got != tc.want {
				t.Fatalf("reasoning_effort: got %v, want %v", got, tc.want)
			}
		})
	}
}
