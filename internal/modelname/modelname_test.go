package modelname

import "testing"

func TestLookup(t *testing.T) {
	t.Parallel()
	m := map[string]int{"gpt-realtime": 1, "gpt-realtime-2025-08-28": 2, "gpt-5-mini": 3, "claude-sonnet-4-5": 4}
	cases := []struct {
		name string
		want int
		ok   bool
	}{
		{"gpt-realtime", 1, true},
		{"gpt-realtime-2025-08-28", 2, true}, // a listed snapshot is its own
		{"gpt-realtime-2026-01-01", 1, true},
		{"gpt-5-mini-2025-08-07", 3, true},
		{"gpt-realtime-2025-08", 0, false},
		{"2025-08-28", 0, false},
		{"gpt-realtime-preview", 0, false},
		{"claude-sonnet-4-5-20250929", 4, true}, // Anthropic dates its snapshots without dashes
		{"claude-sonnet-4-5-2025092", 0, false},
		{"", 0, false},
	}
	for _, tc := range cases {
		got, ok := Lookup(m, tc.name)
		if got != tc.want || ok != tc.ok {
			t.Errorf("Lookup(%q) = %d, %v; want %d, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}

func TestRerouted(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		asked, answered string
		want            bool
	}{
		{"gemini-2.5-pro", "gemini-2.5-pro", false},
		{"gemini-2.5-pro", "gemini-2.5-pro-001", false},
		{"gpt-4.1-mini", "gpt-4.1-mini-2025-04-14", false},
		{"gemini-2.5-pro", "gemini-3.8-flash", true},
		{"gemini-2.5-flash", "gemini-2.5-flash-lite", false}, // a suffix reads as a version: the price is by the answer's name anyway
		{"gemini-2.5-flash", "gemini-3.5-flash-lite", true},
		{"gpt-4.1", "", false},
	} {
		if got := Rerouted(tc.asked, tc.answered); got != tc.want {
			t.Errorf("Rerouted(%q, %q) = %v, want %v", tc.asked, tc.answered, got, tc.want)
		}
	}
}
