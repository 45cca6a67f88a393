package openai

import "testing"

// Every row of the price list reads, and every current model the
// simulator lists by default is on it.
func TestPriceListReads(t *testing.T) {
	p, err := readPrices(openAIPrices())
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range append(currentModels, "gpt-live-1", "gpt-live-1.1") {
		if _, ok := p.of(m); !ok {
			t.Errorf("%s has no price", m)
		}
	}
	if _, err := readPrices(map[string]listed{"m": {textIn: "$4"}}); err == nil {
		t.Error("a figure with a dollar sign read")
	}
}

// Each request's cost against a hand computation at the published rates:
// n tokens at $d per 1M are n·d micro-USD.
func TestOrgCost(t *testing.T) {
	p, err := readPrices(openAIPrices())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, model string
		u           OrgUsage
		want        int64 // micro-USD
		priced      bool
	}{
		{"gpt-realtime-2.1 text out at $24, not gpt-realtime's $16", "gpt-realtime-2.1", OrgUsage{TextOut: 1_000_000}, 24_000_000, true},
		{"gpt-realtime text out at $16", "gpt-realtime", OrgUsage{TextOut: 1_000_000}, 16_000_000, true},
		// 600 × 4 + 400 × 0.40 + 400 × 32 + 100 × 0.40 = 15,400.
		{"cached input at its own price, once", "gpt-realtime-2.1",
			OrgUsage{TextIn: 1000, TextCached: 400, AudioIn: 500, AudioCached: 100}, 15_400, true},
		// 300 × 0.80 + 200 × 0.08 + 10 × 20 = 456.
		{"images", "gpt-realtime-2.1-mini", OrgUsage{ImageIn: 500, ImageCached: 200, AudioOut: 10}, 456, true},
		// 976 × 2 + 1,024 × 0.10 + 1,000 × 2.50 + 200 × 10 = 6,554.4.
		{"cache writes at their own price", "gpt-6.2-sol",
			OrgUsage{TextIn: 3000, TextCached: 1024, cacheWrite: 1000, TextOut: 200}, 6_554, true},
		{"a half rounds up", "gpt-6-luna", OrgUsage{TextIn: 5}, 1, true},             // 0.5
		{"less than a half rounds down", "gpt-6-luna", OrgUsage{TextIn: 4}, 0, true}, // 0.4
		// 1,000 × 0.40 + 100 × 1.60 = 560.
		{"a snapshot at its family's price", "gpt-4.1-mini-2025-04-14", OrgUsage{TextIn: 1000, TextOut: 100}, 560, true},
		// 10 × 3.00 + 3 × 5.00 = 45.
		{"transcription tokens", "gpt-4o-mini-transcribe", OrgUsage{AudioIn: 10, TextOut: 3}, 45, true},
		{"GPT-Live's start charge: 15 s at $0.05/min", "gpt-live-1", OrgUsage{MS: 15_000}, 12_500, true},
		{"whisper-1: 1.5 s at $0.006/min", "whisper-1", OrgUsage{MS: 1_500}, 150, true},
		{"a millisecond of gpt-transcribe is 0.075", "gpt-transcribe", OrgUsage{MS: 1}, 0, true},
		{"a minute of gpt-live-transcribe", "gpt-live-transcribe", OrgUsage{MS: 60_000}, 17_000, true},
		{"a class the page prints no price for", "gpt-6-luna", OrgUsage{AudioIn: 10}, 0, false},
		{"time on a model billed by tokens", "gpt-6-luna", OrgUsage{MS: 10}, 0, false},
		{"more cached than input", "gpt-6-luna", OrgUsage{TextIn: 1, TextCached: 2}, 0, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, ok := p.of(c.model)
			if !ok {
				t.Fatalf("%s has no price", c.model)
			}
			got, priced := r.cost(c.u)
			if got != c.want || priced != c.priced {
				t.Errorf("got %d, %v; want %d, %v", got, priced, c.want, c.priced)
			}
		})
	}
	if _, ok := p.of("gpt-9"); ok {
		t.Error("a model the list does not name has a price")
	}
}
