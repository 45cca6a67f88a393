package billing

import "testing"

// TestParseSum: the summary statement's text is a whole non-negative
// number of any size, or the summary fails rather than show a wrong one.
func TestParseSum(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string
		ok             bool
	}{
		{"zero", "0", "0", true},
		{"beyond int64", "10000000000000000000", "10000000000000000000", true},
		{"beyond int128", "340282366920938463463374607431768211457", "340282366920938463463374607431768211457", true},
		{"empty", "", "", false},
		{"NaN", "NaN", "", false},
		{"fraction", "1.5", "", false},
		{"negative", "-1", "", false},
		{"signed", "+1", "", false},
		{"exponent", "1e19", "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseSum(tc.in)
			if (err == nil) != tc.ok {
				t.Fatalf("parseSum(%q): got error %v, want ok %v", tc.in, err, tc.ok)
			}
			if tc.ok && got.String() != tc.want {
				t.Errorf("parseSum(%q): got %s, want %s", tc.in, got, tc.want)
			}
		})
	}
	if got, _ := (Sum{}).MarshalJSON(); string(got) != "0" {
		t.Errorf("zero Sum marshals to %s, want 0", got)
	}
}
