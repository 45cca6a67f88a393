package gemini_test

import (
	"errors"
	"testing"
	"time"

	"google.golang.org/genai"

	"github.com/voxgate/voxgate/internal/testkit"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// TestGeminiReroutesRetiredModels: from the re-route date a request for a
// retired model is answered by its target, named in modelVersion and with
// the target's usage (a Lite model reports no thought tokens); the day
// before, the model answers as itself.
func TestGeminiReroutesRetiredModels(t *testing.T) {
	t.Parallel()
	cases := []struct {
		model, day, want string
		thoughts         int32
	}{
		{"gemini-2.5-pro", "2026-11-30", "gemini-2.5-pro", 32},
		{"gemini-2.5-pro", "2026-12-01", "gemini-3.8-flash", 32},
		{"gemini-2.5-flash", "2026-12-01", "gemini-3.5-flash-lite", 0},
		{"gemini-2.5-flash-lite", "2026-12-01", "gemini-2.5-flash-lite", 0},
		{"gemini-3.7-flash", "2026-11-29", "gemini-3.8-flash", 32},
	}
	for _, tc := range cases {
		t.Run(tc.model+"@"+tc.day, func(t *testing.T) {
			now, _ := time.Parse(time.DateOnly, tc.day)
			now = now.Add(time.Hour)
			_, url := testkit.NewSim(t, sim.Config{Now: func() time.Time { return now }})
			c := simtest.NewGeminiClient(t, url)
			resp, err := c.Models.GenerateContent(t.Context(), tc.model, genai.Text("hello"), nil)
			if err != nil {
				t.Fatalf("generate: %v", err)
			}
			if resp.ModelVersion != tc.want {
				t.Errorf("modelVersion %q, want %q", resp.ModelVersion, tc.want)
			}
			if got := resp.UsageMetadata.ThoughtsTokenCount; got != tc.thoughts {
				t.Errorf("thoughtsTokenCount %d, want %d (as %s)", got, tc.thoughts, tc.want)
			}
		})
	}
}

// TestGeminiThinkingLevels: gemini-3.8-flash takes LOW, MEDIUM and HIGH and
// refuses MINIMAL with a 400, also when it answers for a re-routed model.
func TestGeminiThinkingLevels(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	_, url := testkit.NewSim(t, sim.Config{Now: func() time.Time { return now }})
	c := simtest.NewGeminiClient(t, url)
	for _, level := range []genai.ThinkingLevel{genai.ThinkingLevelLow, genai.ThinkingLevelMedium, genai.ThinkingLevelHigh} {
		cfg := &genai.GenerateContentConfig{ThinkingConfig: &genai.ThinkingConfig{ThinkingLevel: level}}
		if _, err := c.Models.GenerateContent(t.Context(), "gemini-3.8-flash", genai.Text("hi"), cfg); err != nil {
			t.Errorf("level %s: %v", level, err)
		}
	}
	cfg := &genai.GenerateContentConfig{ThinkingConfig: &genai.ThinkingConfig{ThinkingLevel: genai.ThinkingLevelMinimal}}
	for _, model := range []string{"gemini-3.8-flash", "gemini-2.5-pro"} {
		_, err := c.Models.GenerateContent(t.Context(), model, genai.Text("hi"), cfg)
		var apiErr genai.APIError
		if !errors.As(err, &apiErr) || apiErr.Code != 400 || apiErr.Status != "INVALID_ARGUMENT" {
			t.Errorf("%s at MINIMAL: got %v, want a 400 INVALID_ARGUMENT", model, err)
		}
	}
	// Another model keeps MINIMAL.
	if _, err := c.Models.GenerateContent(t.Context(), "gemini-3.5-flash-lite", genai.Text("hi"), cfg); err != nil {
		t.Errorf("gemini-3.5-flash-lite at MINIMAL: %v", err)
	}
}

// TestGeminiRecordsStore: the simulator counts whether a request sent
// store, and which value.
func TestGeminiRecordsStore(t *testing.T) {
	t.Parallel()
	s, url := testkit.NewSim(t, sim.Config{})
	c := simtest.NewGeminiClient(t, url)
	no, yes := false, true
	for _, store := range []*bool{nil, &no, &no, &yes} {
		if _, err := c.Models.GenerateContent(t.Context(), "gemini-3.8-flash", genai.Text("hi"), &genai.GenerateContentConfig{Store: store}); err != nil {
			t.Fatalf("generate: %v", err)
		}
	}
	if got := s.GeminiStores(); got.Unset != 1 || got.False != 2 || got.True != 1 {
		t.Errorf("stores %+v, want 1 unset, 2 false, 1 true", got)
	}
}
