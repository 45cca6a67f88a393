package billing

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
)

// MaxCount bounds every token count and duration a record may hold (DESIGN
// §6: counts are integers from 0 to 10¹²).
const MaxCount = 1_000_000_000_000

// ErrCount: a count is negative, above MaxCount, or a cached count exceeds
// the input it is part of.
var ErrCount = errors.New("billing: usage count out of range")

// Usage is what one model used, by token class, as DESIGN §10 counts it:
// cached input is part of input (TextCachedIn ≤ TextIn), never extra.
type Usage struct {
	TextIn, TextCachedIn   int64
	TextOut                int64
	AudioIn, AudioCachedIn int64
	AudioOut               int64
	ImageIn, ImageCachedIn int64
	// TextCacheWriteIn is the part of TextIn written to the provider's
	// prompt cache (disjoint from TextCachedIn), billed at its own price;
	// TextCacheWrite12hIn the part of those writes made under a 12-hour
	// TTL, billed at the 12-hour write's price.
	TextCacheWriteIn    int64
	TextCacheWrite12hIn int64
	// AudioMillis is audio billed by duration (transcription that reports
	// seconds rather than tokens).
	AudioMillis int64
	// ServiceTier is the tier the provider named as serving the usage
	// ("" or "default": the standard prices); it multiplies every class
	// (tier.go).
	ServiceTier string
}

// Tokens is u's tokens in and out, cached input being part of input and
// durations no tokens: what a provider's usage reports as input and
// output tokens, and what a user's day counts. The database states the
// same rule for a whole record as usage_record_tokens_in and _out
// (migration 0079); TestTokenCountMatchesTheDatabase keeps them together.
func (u Usage) Tokens() (in, out int64) {
	return u.TextIn + u.AudioIn + u.ImageIn, u.TextOut + u.AudioOut
}

// Add returns the sum of u and v, class by class.
func (u Usage) Add(v Usage) Usage {
	return Usage{
		TextIn: u.TextIn + v.TextIn, TextCachedIn: u.TextCachedIn + v.TextCachedIn, TextOut: u.TextOut + v.TextOut,
		AudioIn: u.AudioIn + v.AudioIn, AudioCachedIn: u.AudioCachedIn + v.AudioCachedIn, AudioOut: u.AudioOut + v.AudioOut,
		ImageIn: u.ImageIn + v.ImageIn, ImageCachedIn: u.ImageCachedIn + v.ImageCachedIn,
		TextCacheWriteIn: u.TextCacheWriteIn + v.TextCacheWriteIn, TextCacheWrite12hIn: u.TextCacheWrite12hIn + v.TextCacheWrite12hIn,
		AudioMillis: u.AudioMillis + v.AudioMillis, ServiceTier: addTiers(u, v),
	}
}

// IsZero reports a usage with nothing in it.
func (u Usage) IsZero() bool { return u == Usage{} }

// Check refuses counts outside [0, MaxCount], cached counts above their
// input, 12-hour writes above the writes, and a tier that is no tier's
// name.
func (u Usage) Check() error {
	for _, v := range []int64{u.TextIn, u.TextCachedIn, u.TextOut, u.AudioIn, u.AudioCachedIn, u.AudioOut, u.ImageIn, u.ImageCachedIn, u.TextCacheWriteIn, u.TextCacheWrite12hIn, u.AudioMillis} {
		if v < 0 || v > MaxCount {
			return fmt.Errorf("%w: %d not in [0, %d]", ErrCount, v, int64(MaxCount))
		}
	}
	if u.TextCachedIn+u.TextCacheWriteIn > u.TextIn || u.AudioCachedIn > u.AudioIn || u.ImageCachedIn > u.ImageIn {
		return fmt.Errorf("%w: cached tokens exceed input tokens", ErrCount)
	}
	if u.TextCacheWrite12hIn > u.TextCacheWriteIn {
		return fmt.Errorf("%w: 12-hour cache writes exceed cache writes", ErrCount)
	}
	if !tierName.MatchString(u.ServiceTier) {
		return fmt.Errorf("%w: service tier %q", ErrCount, u.ServiceTier)
	}
	return nil
}

// tokens lists u's billable tokens by class: cached input and input
// written to the cache at their own prices, the rest of the input at the
// input price.
func (u Usage) tokens() [numClasses]int64 {
	return [numClasses]int64{
		TextIn: u.TextIn - u.TextCachedIn - u.TextCacheWriteIn, TextCachedIn: u.TextCachedIn, TextOut: u.TextOut,
		AudioIn: u.AudioIn - u.AudioCachedIn, AudioCachedIn: u.AudioCachedIn, AudioOut: u.AudioOut,
		ImageIn: u.ImageIn - u.ImageCachedIn, ImageCachedIn: u.ImageCachedIn,
		TextCacheWriteIn: u.TextCacheWriteIn - u.TextCacheWrite12hIn, TextCacheWrite12hIn: u.TextCacheWrite12hIn,
	}
}

// Line is one model's share of a record: a voice session bills its
// Realtime model and its transcription model on one record.
type Line struct {
	Model string
	Usage Usage
}

// Unpriced explains why a record has no cost: a model with no price, or
// tokens in a class the model's price does not cover.
type Unpriced struct {
	Model string
	Class string // empty when the model has no price at all
}

func (u *Unpriced) Error() string {
	if u.Class == "" {
		return fmt.Sprintf("billing: model %q has no price", u.Model)
	}
	return fmt.Sprintf("billing: model %q has no %s price", u.Model, u.Class)
}

// denominator makes one fraction of both kinds of price: a token price is
// per 1e6 tokens, a duration price per 60,000 ms.
const denominator = 1_000_000 * 60_000

// Cost is the record's cost in micro-USD: round_half_up(Σ count × price ×
// tier multiple ÷ unit) over every line and class, summed exactly in 128
// bits and rounded once (DESIGN §10). A line that cannot be priced returns *Unpriced and no
// cost, never a partial one; bad counts return ErrCount.
func (p *Prices) Cost(lines ...Line) (int64, error) {
	for _, l := range lines {
		if err := l.Usage.Check(); err != nil {
			return 0, err
		}
	}
	var sum u128
	why := p.walk(lines, func(it priced) {
		unit := uint64(60_000)
		if it.perMinute {
			unit = 1_000_000
		}
		sum = sum.add(mul(uint64(it.n), uint64(it.price)*unit*uint64(it.halves)))
	})
	if why != nil {
		return 0, why
	}
	return sum.roundDiv(2 * denominator)
}

// priced is one quantity of a record's lines with its price: n tokens of a
// class at price per 1M, or n milliseconds at price per minute.
type priced struct {
	line      int // the index in the lines walked
	model     string
	class     string
	n, price  int64
	perMinute bool
	// halves is the line's service-tier multiple in halves (tierHalves):
	// the price is price × halves ÷ 2.
	halves int64
	tier   string
}

// walk is the one pricing walk, behind Cost and the cost lines: it visits,
// in order, every quantity of lines that has a price, and returns the first
// reason one has none (a model or a class the table lacks), nil when all do.
func (p *Prices) walk(lines []Line, visit func(priced)) *Unpriced {
	var why *Unpriced
	unpriced := func(u *Unpriced) {
		if why == nil {
			why = u
		}
	}
	for i, l := range lines {
		if l.Usage.IsZero() {
			continue
		}
		price, ok := p.Lookup(l.Model)
		if !ok {
			unpriced(&Unpriced{Model: l.Model})
			continue
		}
		halves, ok := tierHalves(l.Usage.ServiceTier)
		if !ok {
			unpriced(&Unpriced{Model: l.Model, Class: "service tier " + l.Usage.ServiceTier})
			continue
		}
		for c, n := range l.Usage.tokens() {
			if n == 0 {
				continue
			}
			per1M, ok := price.Price(Class(c))
			if !ok {
				unpriced(&Unpriced{Model: l.Model, Class: Class(c).String()})
				continue
			}
			visit(priced{i, l.Model, Class(c).String(), n, per1M, false, halves, l.Usage.ServiceTier})
		}
		if ms := l.Usage.AudioMillis; ms > 0 {
			if !price.HasPerMinute {
				unpriced(&Unpriced{Model: l.Model, Class: "audio_per_minute"})
				continue
			}
			visit(priced{i, l.Model, "audio_per_minute", ms, price.PerMinute, true, halves, l.Usage.ServiceTier})
		}
	}
	return why
}

// u128 is an unsigned 128-bit sum: counts up to 1e12 times prices up to
// 1e11 overflow int64 long before they could overflow this.
type u128 struct{ hi, lo uint64 }

func mul(a, b uint64) u128 {
	hi, lo := bits.Mul64(a, b)
	return u128{hi, lo}
}

func (x u128) add(y u128) u128 {
	lo, carry := bits.Add64(x.lo, y.lo, 0)
	hi, _ := bits.Add64(x.hi, y.hi, carry)
	return u128{hi, lo}
}

// errOverflow: a sum whose cost does not fit int64 micro-USD (over nine
// trillion dollars), which only absurd inputs reach.
var errOverflow = errors.New("billing: cost out of range")

// roundDiv is round_half_up(x ÷ d).
func (x u128) roundDiv(d uint64) (int64, error) {
	if x.hi >= d {
		return 0, errOverflow
	}
	q, r := bits.Div64(x.hi, x.lo, d)
	if r >= d-r { // r ≥ d/2 without overflow
		q++
	}
	if q > math.MaxInt64 {
		return 0, errOverflow
	}
	return int64(q), nil
}
