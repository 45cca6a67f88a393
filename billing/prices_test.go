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
		"gpt-4o-mini", "gpt-4.1-mini", "gpt-5-mini", "gpt-realtime-2025-08-28",
		"gpt-realtime-2.1", "gpt-realtime-2.1-mini", "gpt-transcribe", "gpt-live-transcribe", "gpt-realtime-whisper",
		"gpt-6-luna", "gpt-6.1-terra", "gpt-6.2-sol"); err != nil {
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
		if c == TextCacheWriteIn || c == TextCacheWrite12hIn {
			continue // Realtime usage reports no cache writes
		}
		if _, ok := rt.Price(c); !ok {
			t.Errorf("gpt-realtime has no %s price", c)
		}
	}
}

// The current models' figures, as the reference lists them: a row copied
// from its predecessor (gpt-realtime's $16 text output) would pass the
// coverage test above and still misprice every session.
func TestCurrentModelPrices(t *testing.T) {
	t.Parallel()
	p := mustPrices(t)
	cases := []struct {
		model string
		class Class
		want  int64
	}{
		{"gpt-realtime-2.1", TextOut, 24_000_000},
		{"gpt-realtime-2.1", AudioOut, 64_000_000},
		{"gpt-realtime-2.1", AudioCachedIn, 400_000},
		{"gpt-realtime-2.1-mini", TextOut, 2_400_000},
		{"gpt-realtime-2.1-mini", AudioIn, 10_000_000},
		{"gpt-6-luna", TextIn, 100_000},
		{"gpt-6-luna", TextCachedIn, 10_000},
		{"gpt-6-luna", TextOut, 500_000},
		{"gpt-6-luna", TextCacheWriteIn, 125_000},
		{"gpt-6.1-terra", TextCacheWriteIn, 1_250_000},
		{"gpt-6.2-sol", TextCacheWriteIn, 2_500_000},
		// 12-hour writes: sol's page, terra 3P, luna twice its 30-minute
		// write (models.md, read again 2026-11-28).
		{"gpt-6.2-sol", TextCacheWrite12hIn, 5_000_000},
		{"gpt-6.1-terra", TextCacheWrite12hIn, 2_500_000},
		{"gpt-6-luna", TextCacheWrite12hIn, 250_000},
		{"gpt-6.1-terra", TextOut, 5_000_000},
		{"gpt-6.2-sol", TextIn, 2_000_000},
		{"gpt-6.2-sol", TextCachedIn, 100_000},
		{"gpt-realtime", TextOut, 16_000_000}, // the retiring model keeps its own row
	}
	for _, tc := range cases {
		t.Run(tc.model+"/"+tc.class.String(), func(t *testing.T) {
			m, ok := p.Lookup(tc.model)
			got, has := m.Price(tc.class)
			if !ok || !has || got != tc.want {
				t.Fatalf("got %d (listed %v, class priced %v), want %d", got, ok, has, tc.want)
			}
		})
	}
	perMinute := []struct {
		model string
		want  int64
	}{{"gpt-transcribe", 4_500}, {"gpt-live-transcribe", 17_000}, {"gpt-realtime-whisper", 17_000}}
	for _, tc := range perMinute {
		m, _ := p.Lookup(tc.model)
		if !m.HasPerMinute || m.PerMinute != tc.want {
			t.Errorf("%s: got %d per minute (priced %v), want %d", tc.model, m.PerMinute, m.HasPerMinute, tc.want)
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
