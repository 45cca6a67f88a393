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
