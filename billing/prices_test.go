package billing

import (
	"strings"
	"testing"
)

func TestDefaultPricesCoverTheProduct(t *testing.T) {
	t.Parallel()
	p := mustPrices(t)
	if p.Version == "" {
		t.Fatal("no version")
	}
	// The Realtime models voice uses, their transcription models, and the
	// chat models of the text path.
	if err := p.Require("gpt-realtime", "gpt-realtime-mini", "gpt-4o-transcribe", "gpt-4o-mini-transcribe", "whisper-1",
		"gpt-4o-mini", "gpt-4.1-mini", "gpt-5-mini", "gpt-realtime-2025-08-28"); err != nil {
		t.Fatal(err)
	}
	for _, name := range p.Models() {
		m, _ := p.Lookup(name)
		if m.Source == "" || m.Date == "" {
			t.Errorf("%s: source %q, date %q", name, m.Source, m.Date)
		}
	}
	rt, _ := p.Lookup("gpt-realtime")
	for c := range numClasses {
		if _, ok := rt.Price(c); !ok {
			t.Errorf("gpt-realtime has no %s price", c)
		}
	}
}

func TestRequireNamesTheModel(t *testing.T) {
	t.Parallel()
	err := mustPrices(t).Require("gpt-realtime", "gpt-imaginary-1")
	if err == nil || !strings.Contains(err.Error(), `"gpt-imaginary-1"`) {
		t.Fatalf("error %v, want one naming gpt-imaginary-1", err)
	}
}

func TestLookupSnapshots(t *testing.T) {
	t.Parallel()
	p := mustPrices(t)
	cases := []struct {
		model string
		ok    bool
		want  int64 // text_in
	}{
		{"gpt-realtime", true, 4_000_000},
		{"gpt-realtime-2025-08-28", true, 4_000_000},
		{"gpt-realtime-mini-2025-10-06", true, 600_000},
		{"gpt-4o-mini-2024-07-18", true, 150_000},
		{"gpt-realtime-preview", false, 0},
		{"gpt-realtime-2025-08", false, 0},
		{"2025-08-28", false, 0},
		{"", false, 0},
	}
	for _, tc := range cases {
		m, ok := p.Lookup(tc.model)
		got, _ := m.Price(TextIn)
		if ok != tc.ok || got != tc.want {
			t.Errorf("Lookup(%q) = %d, %v; want %d, %v", tc.model, got, ok, tc.want, tc.ok)
		}
	}
}

func TestLoadPricesRefuses(t *testing.T) {
	t.Parallel()
	const ok = "version: v1\nmodels:\n  m:\n    source: s\n    date: \"2026-01-02\"\n    text_in: 1\n"
	if _, err := LoadPrices([]byte(ok)); err != nil {
		t.Fatalf("a valid table: %v", err)
	}
	cases := []struct{ name, yaml, want string }{
		{"no version", "models:\n  m:\n    source: s\n    date: \"2026-01-02\"\n    text_in: 1\n", "version"},
		{"no models", "version: v1\n", "no models"},
		{"unknown key", strings.Replace(ok, "text_in", "txt_in", 1), "txt_in"},
		{"negative", strings.Replace(ok, "text_in: 1", "text_in: -1", 1), `"m"`},
		{"absurd", strings.Replace(ok, "text_in: 1", "text_in: 100000000001", 1), "text_in"},
		{"no source", strings.Replace(ok, "source: s", "source: \"\"", 1), "source"},
		{"bad date", strings.Replace(ok, "2026-01-02", "Jan 2", 1), "date"},
		{"no prices", "version: v1\nmodels:\n  m:\n    source: s\n    date: \"2026-01-02\"\n", "no prices"},
		{"fraction", strings.Replace(ok, "text_in: 1", "text_in: 1.5", 1), "line 6"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadPrices([]byte(tc.yaml))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one mentioning %q", err, tc.want)
			}
		})
	}
}

// A zero price is allowed when said: it is a price, not a missing one.
func TestExplicitZeroPriceIsPriced(t *testing.T) {
	t.Parallel()
	p, err := LoadPrices([]byte("version: v1\nmodels:\n  free-model:\n    source: s\n    date: \"2026-01-02\"\n    text_in: 0\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := p.Cost(Line{"free-model", Usage{TextIn: 1000}}); err != nil || got != 0 {
		t.Fatalf("cost %d, %v; want 0, nil", got, err)
	}
}
