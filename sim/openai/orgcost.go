package openai

import "math/big"

// OrgUsage is one billed request as the price list counts it. Each input
// count holds its cached part, and text input its part written to the
// cache, as the API's usage reports them (prompt_tokens "includes"
// cached_tokens; input_tokens "includes text, audio, and image tokens").
type OrgUsage struct {
	TextIn, TextCached, cacheWrite, TextOut int64
	AudioIn, AudioCached, AudioOut          int64
	ImageIn, ImageCached                    int64
	// MS is audio billed by duration: a transcription's seconds, a
	// GPT-Live session's time.
	MS int64
}

// chatUsage is a chat completion's usage as the price list bills it.
func chatUsage(u usageBody) OrgUsage {
	o := OrgUsage{TextIn: int64(u.PromptTokens), TextCached: int64(u.PromptTokensDetails.CachedTokens),
		TextOut: int64(u.CompletionTokens)}
	if w := u.PromptTokensDetails.CacheWriteTokens; w != nil {
		o.cacheWrite = int64(*w)
	}
	return o
}

// cost is what a request with usage u bills at r, in micro-USD: each
// class's tokens at its dollars per 1M tokens — so n tokens at $d cost
// n·d micro-USD — with the uncached input at the input price, plus the
// minutes billed by duration, summed exactly and rounded half up to the
// micro-dollar once per request. ok is false when u has tokens in a class
// r prints no price for: the simulator then bills that request nothing.
func (r rates) cost(u OrgUsage) (micros int64, ok bool) {
	uncachedText := u.TextIn - u.TextCached - u.cacheWrite
	uncachedAudio := u.AudioIn - u.AudioCached
	uncachedImage := u.ImageIn - u.ImageCached
	if uncachedText < 0 || uncachedAudio < 0 || uncachedImage < 0 {
		return 0, false
	}
	sum := new(big.Rat)
	for _, c := range []struct {
		n     int64
		price *big.Rat
	}{
		{uncachedText, r.textIn}, {u.TextCached, r.textCached}, {u.cacheWrite, r.cacheWrite}, {u.TextOut, r.textOut},
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
	return halfUp(sum), true
}

// halfUp rounds a non-negative fraction to the nearest integer, a half
// upwards: floor((2·num + den) / (2·den)).
func halfUp(x *big.Rat) int64 {
	num := new(big.Int).Lsh(x.Num(), 1)
	num.Add(num, x.Denom())
	den := new(big.Int).Lsh(x.Denom(), 1)
	return num.Quo(num, den).Int64()
}
