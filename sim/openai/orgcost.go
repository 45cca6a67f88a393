package openai

import "math/big"

// OrgUsage is one billed request as the price list counts it. Each input
// count holds its cached part, and text input its part written to the
// cache, as the API's usage reports them (prompt_tokens "includes"
// cached_tokens; input_tokens "includes text, audio, and image tokens").
type OrgUsage struct {
	TextIn, TextCached, cacheWrite, TextOut int64
	// cacheWrite12h is the part of cacheWrite made under a 12-hour TTL,
	// billed at twice the 30-minute write (the request's own ttl: usage
	// does not split them).
	cacheWrite12h                  int64
	AudioIn, AudioCached, AudioOut int64
	ImageIn, ImageCached           int64
	// MS is audio billed by duration: a transcription's seconds, a
	// GPT-Live session's time.
	MS int64
	// tier is the service tier the answer named ("" is default): priority
	// bills every class twice over, flex and batch half.
	tier string
}

// chatUsage is a chat completion's usage as the price list bills it: its
// cache writes under ttl (the request's prompt_cache_options.ttl), on the
// tier the answer named.
func chatUsage(u usageBody, ttl, tier string) OrgUsage {
	o := OrgUsage{TextIn: int64(u.PromptTokens), TextCached: int64(u.PromptTokensDetails.CachedTokens),
		TextOut: int64(u.CompletionTokens), tier: tier}
	if w := u.PromptTokensDetails.CacheWriteTokens; w != nil {
		o.cacheWrite = int64(*w)
		if ttl == CacheTTL12h {
			o.cacheWrite12h = o.cacheWrite
		}
	}
	return o
}

// tierMultiple is what a tier's usage costs beside the default tier's
// (the pricing page's Priority and Flex columns, models.md); ok false for
// a tier the list prints no column for.
func tierMultiple(tier string) (m *big.Rat, ok bool) {
	switch tier {
	case "", "default":
		return big.NewRat(1, 1), true
	case "priority":
		return big.NewRat(2, 1), true
	case "flex", "batch":
		return big.NewRat(1, 2), true
	}
	return nil, false
}

// cost is what a request with usage u bills at r, in micro-USD: each
// class's tokens at its dollars per 1M tokens — so n tokens at $d cost
// n·d micro-USD — with the uncached input at the input price, plus the
// minutes billed by duration, summed exactly and rounded half up to the
// micro-dollar once per request. ok is false when u has tokens in a class
// r prints no price for: the simulator then bills that request nothing.
func (r rates) cost(u OrgUsage) (micros int64, ok bool) {
	uncachedText := u.TextIn - u.TextCached - u.cacheWrite
	write30m := u.cacheWrite - u.cacheWrite12h
	uncachedAudio := u.AudioIn - u.AudioCached
	uncachedImage := u.ImageIn - u.ImageCached
	multiple, ok := tierMultiple(u.tier)
	if uncachedText < 0 || uncachedAudio < 0 || uncachedImage < 0 || write30m < 0 || !ok {
		return 0, false
	}
	sum := new(big.Rat)
	for _, c := range []struct {
		n     int64
		price *big.Rat
	}{
		{uncachedText, r.textIn}, {u.TextCached, r.textCached}, {write30m, r.cacheWrite}, {u.cacheWrite12h, r.cacheWrite12h},
		{u.TextOut, r.textOut},
		{uncachedAudio, r.audioIn}, {u.AudioCached, r.audioCached}, {u.AudioOut, r.audioOut},
		{uncachedImage, r.imageIn}, {u.ImageCached, r.imageCached},
	} {
		if c.n == 0 {
			continue
		}
		if c.price == nil {
			return 0, false
		}
		sum.Add(sum, new(big.Rat).Mul(new(big.Rat).SetInt64(c.n), c.price))
	}
	if u.MS > 0 {
		if r.perMinute == nil {
			return 0, false
		}
		// $d a minute for ms milliseconds is d · ms / 60,000 dollars,
		// a million times that in micro-USD.
		minutes := new(big.Rat).SetFrac64(u.MS, 60_000)
		minutes.Mul(minutes, r.perMinute)
		sum.Add(sum, minutes.Mul(minutes, big.NewRat(1_000_000, 1)))
	}
	return halfUp(sum.Mul(sum, multiple)), true
}

// halfUp rounds a non-negative fraction to the nearest integer, a half
// upwards: floor((2·num + den) / (2·den)).
func halfUp(x *big.Rat) int64 {
	num := new(big.Int).Lsh(x.Num(), 1)
	num.Add(num, x.Denom())
	den := new(big.Int).Lsh(x.Denom(), 1)
	return num.Quo(num, den).Int64()
}
