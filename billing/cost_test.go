package billing

import (
	"errors"
	"math/big"
	"testing"
)

func mustPrices(t testing.TB) *Prices {
	t.Helper()
	p, err := DefaultPrices()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// oracle computes a record's cost independently of Cost: exact rationals,
// one half-up rounding, straight from DESIGN §10's formula.
func oracle(t testing.TB, p *Prices, lines ...Line) int64 {
	t.Helper()
	sum := new(big.Rat)
	for _, l := range lines {
		m, ok := p.Lookup(l.Model)
		if !ok {
			t.Fatalf("oracle: no price for %s", l.Model)
		}
		u := l.Usage
		terms := []struct {
			n int64
			c Class
		}{
			{u.TextIn - u.TextCachedIn - u.TextCacheWriteIn, TextIn}, {u.TextCachedIn, TextCachedIn}, {u.TextOut, TextOut},
			{u.TextCacheWriteIn - u.TextCacheWrite12hIn, TextCacheWriteIn}, {u.TextCacheWrite12hIn, TextCacheWrite12hIn},
			{u.AudioIn - u.AudioCachedIn, AudioIn}, {u.AudioCachedIn, AudioCachedIn}, {u.AudioOut, AudioOut},
			{u.ImageIn - u.ImageCachedIn, ImageIn}, {u.ImageCachedIn, ImageCachedIn},
		}
		line := new(big.Rat)
		for _, term := range terms {
			price, _ := m.Price(term.c)
			line.Add(line, new(big.Rat).SetFrac(new(big.Int).Mul(big.NewInt(term.n), big.NewInt(price)), big.NewInt(1_000_000)))
		}
		line.Add(line, new(big.Rat).SetFrac(new(big.Int).Mul(big.NewInt(u.AudioMillis), big.NewInt(m.PerMinute)), big.NewInt(60_000)))
		multiple := map[string]*big.Rat{"": big.NewRat(1, 1), "default": big.NewRat(1, 1), "priority": big.NewRat(2, 1),
			"flex": big.NewRat(1, 2), "batch": big.NewRat(1, 2)}[u.ServiceTier]
		if multiple == nil {
			t.Fatalf("oracle: tier %q", u.ServiceTier)
		}
		sum.Add(sum, line.Mul(line, multiple))
	}
	// round half up: floor(x + 1/2)
	sum.Add(sum, big.NewRat(1, 2))
	q := new(big.Int).Quo(sum.Num(), sum.Denom())
	if !q.IsInt64() {
		t.Fatalf("oracle: %s does not fit int64", q)
	}
	return q.Int64()
}

func TestCost(t *testing.T) {
	t.Parallel()
	p := mustPrices(t)
	cases := []struct {
		name  string
		lines []Line
		want  int64 // hand-computed from prices.yaml
	}{
		{"zero", []Line{{"gpt-realtime", Usage{}}}, 0},
		{"no lines", nil, 0},
		// 1,000 text in × $4/1M = 4,000 micros; 500 out × $16/1M = 8,000.
		{"text only", []Line{{"gpt-realtime", Usage{TextIn: 1000, TextOut: 500}}}, 12_000},
		// 600 audio in × 32 + 1,200 audio out × 64 = 19,200 + 76,800.
		{"audio only", []Line{{"gpt-realtime", Usage{AudioIn: 600, AudioOut: 1200}}}, 96_000},
		// 1,000 text in of which 800 cached: 200 × 4 + 800 × 0.4 = 800 + 320.
		{"cached text is part of input", []Line{{"gpt-realtime", Usage{TextIn: 1000, TextCachedIn: 800}}}, 1_120},
		// 1,000 image in, 400 cached: 600 × 5 + 400 × 0.5 = 3,000 + 200.
		{"image", []Line{{"gpt-realtime", Usage{ImageIn: 1000, ImageCachedIn: 400}}}, 3_200},
		// The session's model plus its transcription model on one record:
		// 100 audio in × 32 = 3,200; transcription 100 audio × 3 + 20 text out × 5 = 300 + 100.
		{"transcription on the same record", []Line{
			{"gpt-realtime", Usage{AudioIn: 100}},
			{"gpt-4o-mini-transcribe", Usage{AudioIn: 100, TextOut: 20}},
		}, 3_600},
		// whisper-1 by duration: 90 s at $0.006/min = 9,000 micros.
		{"transcription by duration", []Line{{"whisper-1", Usage{AudioMillis: 90_000}}}, 9_000},
		// Input written to the cache is part of input, billed at its own
		// price: 10,000 in = 5,000 plain × 0.10 + 2,000 cached × 0.01 +
		// 3,000 written × 0.125; 500 out × 0.50. 500 + 20 + 375 + 250.
		{"cache writes", []Line{{"gpt-6-luna", Usage{TextIn: 10_000, TextCachedIn: 2_000, TextCacheWriteIn: 3_000, TextOut: 500}}}, 1_145},
		// A dated snapshot takes its family's price.
		{"snapshot", []Line{{"gpt-realtime-2025-08-28", Usage{TextIn: 1000}}}, 4_000},
		// One rounding per record: 1 token at $0.15/1M is 0.15 micros, and
		// ten of them on separate lines are 1.5 → 2, not 10 × round(0.15) = 0.
		{"one rounding", func() []Line {
			var ls []Line
			for range 10 {
				ls = append(ls, Line{"gpt-4o-mini", Usage{TextIn: 1}})
			}
			return ls
		}(), 2},
		// Exactly half rounds up: 10 tokens × $0.15/1M = 1.5 micros.
		{"half up", []Line{{"gpt-4o-mini", Usage{TextIn: 10}}}, 2},
		{"just under half", []Line{{"gpt-4o-mini", Usage{TextIn: 3}}}, 0},
		// 10¹² audio out tokens at $64/1M: 64,000,000,000,000 micros, far past
		// where count × price overflows int64.
		{"counts near 1e12", []Line{{"gpt-realtime", Usage{AudioIn: MaxCount, AudioCachedIn: MaxCount / 2, AudioOut: MaxCount, TextIn: MaxCount, TextOut: MaxCount, ImageIn: MaxCount}}},
			(MaxCount/2)*32 + (MaxCount/2)*4/10 + MaxCount*64 + MaxCount*4 + MaxCount*16 + MaxCount*5},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := p.Cost(tc.lines...)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Fatalf("cost %d micros, want %d", got, tc.want)
			}
			if len(tc.lines) > 0 {
				if o := oracle(t, p, tc.lines...); o != got {
					t.Fatalf("cost %d micros, oracle %d", got, o)
				}
			}
		})
	}
}

func TestCostRefuses(t *testing.T) {
	t.Parallel()
	p := mustPrices(t)
	var unpriced *Unpriced
	cases := []struct {
		name      string
		line      Line
		unpriced  bool
		wantClass string
	}{
		{"unknown model", Line{"gpt-nonexistent", Usage{TextIn: 1}}, true, ""},
		{"class the model has no price for", Line{"gpt-4o-mini", Usage{AudioIn: 1}}, true, "audio_in"},
		{"duration on a token-priced model", Line{"gpt-realtime", Usage{AudioMillis: 1}}, true, "audio_per_minute"},
		{"negative", Line{"gpt-realtime", Usage{TextOut: -1}}, false, ""},
		{"above 1e12", Line{"gpt-realtime", Usage{TextOut: MaxCount + 1}}, false, ""},
		{"cached above input", Line{"gpt-realtime", Usage{TextIn: 1, TextCachedIn: 2}}, false, ""},
		{"cached and written above input", Line{"gpt-6-luna", Usage{TextIn: 10, TextCachedIn: 6, TextCacheWriteIn: 5}}, false, ""},
		{"cache writes on a model that bills none", Line{"gpt-4.1-mini", Usage{TextIn: 10, TextCacheWriteIn: 5}}, true, "text_cache_write_in"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := p.Cost(tc.line)
			if err == nil {
				t.Fatalf("cost %d, want an error", got)
			}
			if tc.unpriced {
				if !errors.As(err, &unpriced) || unpriced.Class != tc.wantClass || unpriced.Model != tc.line.Model {
					t.Fatalf("error %v, want unpriced %s/%q", err, tc.line.Model, tc.wantClass)
				}
			} else if !errors.Is(err, ErrCount) {
				t.Fatalf("error %v, want ErrCount", err)
			}
		})
	}
	// An unknown model with nothing used is not a reason to refuse.
	if got, err := p.Cost(Line{"gpt-nonexistent", Usage{}}); err != nil || got != 0 {
		t.Fatalf("empty usage on an unknown model: %d, %v", got, err)
	}
}

// FuzzCost checks Cost against the exact-rational oracle for any counts.
func FuzzCost(f *testing.F) {
	f.Add(int64(1000), int64(10), int64(500), int64(600), int64(0), int64(1200), int64(3), int64(1), int64(0))
	f.Add(int64(MaxCount), int64(MaxCount), int64(MaxCount), int64(MaxCount), int64(MaxCount), int64(MaxCount), int64(MaxCount), int64(MaxCount), int64(MaxCount))
	p := mustPrices(f)
	f.Fuzz(func(t *testing.T, ti, tc, to, ai, ac, ao, ii, ic, ms int64) {
		rt := Usage{TextIn: ti, TextCachedIn: tc, TextOut: to, AudioIn: ai, AudioCachedIn: ac, AudioOut: ao, ImageIn: ii, ImageCachedIn: ic}
		// The chat line's 12-hour writes and both lines' tiers vary with
		// the counts, so every tier meets every class.
		tiers := []string{"", "default", "priority", "flex", "batch"}
		rt.ServiceTier = tiers[uint64(ao)%5]
		chat := Usage{TextIn: ti, TextCachedIn: ic, TextCacheWriteIn: tc, TextCacheWrite12hIn: ac, TextOut: to, ServiceTier: tiers[uint64(ti)%5]}
		lines := []Line{{"gpt-realtime-mini", rt}, {"whisper-1", Usage{AudioMillis: ms}}, {"gpt-6-luna", chat}, {"gpt-6.2-sol", chat}}
		got, err := p.Cost(lines...)
		if rt.Check() != nil || (Usage{AudioMillis: ms}).Check() != nil || chat.Check() != nil {
			if !errors.Is(err, ErrCount) {
				t.Fatalf("bad counts accepted: %v, %v", got, err)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if want := oracle(t, p, lines...); got != want {
			t.Fatalf("cost %d, oracle %d", got, want)
		}
	})
}
