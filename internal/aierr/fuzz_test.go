package aierr

import (
	"net/http"
	"testing"
	"time"
)

// FuzzInStream: any error object a provider streams, and any Retry-After
// it sends, classify to a known code, with retry advice only for what may
// succeed later and never past the cap; never a panic.
func FuzzInStream(f *testing.F) {
	for _, seed := range []struct{ data, retryAfter string }{
		{`{"error":{"type":"server_error","code":null}}`, "7"},
		{`{"error":{"type":"tokens","code":"rate_limit_exceeded","message":"Request too large for gpt-4o"}}`, "1.5"},
		{`{"error":{"type":"x","code":429}}`, "Wed, 21 Oct 2015 07:28:00 GMT"},
		{`{"error":"boom"}`, "-1"}, {`not json`, "NaN"}, {``, "1e400"},
	} {
		f.Add(seed.data, seed.retryAfter)
	}
	known := map[Code]bool{Timeout: true, RateLimit: true, Auth: true, Unavailable: true, InvalidResponse: true,
		ContentFilter: true, ContextLength: true, Network: true, Unknown: true}
	now := time.Date(2026, 11, 22, 14, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, data, ra string) {
		c := inStream([]byte(data))
		if !known[c.Code] || (c.Retryable && c.Code != RateLimit && c.Code != Unavailable) {
			t.Fatalf("error object %q: got %+v", data, c)
		}
		r := Refusal(http.StatusTooManyRequests, "", "", data, http.Header{"Retry-After": {ra}}, now)
		if r.RetryAfter < 0 || r.RetryAfter > MaxRetryAfter || (!r.Retryable && r.RetryAfter != 0) {
			t.Fatalf("Retry-After %q: got %+v", ra, r)
		}
	})
}
