package billing

import "github.com/voxgate/voxgate/llm"

// FromLLM is a text model call's usage as the ledger counts it: every
// class the seam reports, the 12-hour part of the cache writes and the
// tier that served the call included. The one place the seam's counts
// become the ledger's, so that a class added to llm.Usage is priced
// wherever a call is recorded.
//
// A tier that is no tier's name (the provider's text, not the gateway's)
// is kept as "unknown": stored and priced as no known tier, unpriced.
func FromLLM(u llm.Usage) Usage {
	tier := u.ServiceTier
	if !tierName.MatchString(tier) {
		tier = "unknown"
	}
	return Usage{TextIn: u.InputTokens, TextCachedIn: u.CachedInputTokens, TextCacheWriteIn: u.CacheWriteInputTokens,
		TextCacheWrite12hIn: u.CacheWrite12hInputTokens, TextOut: u.OutputTokens, ServiceTier: tier}
}

// FromCalls is several calls' usage as one record counts it: each by
// FromLLM, summed by Usage.Add (calls served on different tiers are
// "mixed", unpriced).
func FromCalls(calls []llm.Usage) Usage {
	var out Usage
	for _, u := range calls {
		out = out.Add(FromLLM(u))
	}
	return out
}
