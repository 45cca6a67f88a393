package openai

import (
	"fmt"
	"time"

	"github.com/voxgate/voxgate/sim/core"
)

// PromptCacheOptions is the spec's PromptCacheOptionsParam: ttl is the
// least time every cache write of the request lives, mode whether the API
// places its implicit breakpoint. The spec's enum lists "30m" alone ("the
// only supported value"); the 2026-11-28 reading of the model pages
// (models.md) found "12h" taken too, and billed at twice the 30-minute
// write, so the simulator takes both and refuses any other value as the
// API refuses a value outside an enum.
type PromptCacheOptions struct {
	TTL  *string `json:"ttl"`
	Mode *string `json:"mode"`
}

// The TTLs prompt_cache_options.ttl takes.
const (
	CacheTTL30m = "30m"
	CacheTTL12h = "12h"
)

var cacheTTLs = map[string]time.Duration{CacheTTL30m: 30 * time.Minute, CacheTTL12h: 12 * time.Hour}

func (o *PromptCacheOptions) check() error {
	if o == nil {
		return nil
	}
	if o.TTL != nil {
		if _, ok := cacheTTLs[*o.TTL]; !ok {
			return core.ErrInvalidValue("prompt_cache_options.ttl",
				fmt.Sprintf("Invalid value: '%s'. Supported values are: '30m' and '12h'.", *o.TTL))
		}
	}
	if o.Mode != nil && *o.Mode != "implicit" && *o.Mode != "explicit" {
		return core.ErrInvalidValue("prompt_cache_options.mode",
			fmt.Sprintf("Invalid value: '%s'. Supported values are: 'implicit' and 'explicit'.", *o.Mode))
	}
	return nil
}

// cacheTTL is the TTL the request asks its writes to live ("" when it
// asks none) and that time (0 when none).
func (r *ChatRequest) cacheTTL() (string, time.Duration) {
	if r.PromptCacheOptions == nil || r.PromptCacheOptions.TTL == nil {
		return "", 0
	}
	return *r.PromptCacheOptions.TTL, cacheTTLs[*r.PromptCacheOptions.TTL]
}
