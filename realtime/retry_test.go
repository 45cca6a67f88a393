package realtime_test

import (
	"context"
	"testing"
	"time"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/realtime"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// A retryable refusal is retried once only when the provider's wait ends
// before the deadline (the client's timeout or the caller's, whichever is
// sooner); a longer wait is answered at once with that wait, never slept
// through into a timeout.
func TestMintRetriesWithinTheDeadline(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name       string
		retryAfter int
		caller     time.Duration // the caller's own deadline; 0 for none
		want       apierr.Code   // "" for a minted secret
	}{
		{"a wait past the timeout is answered at once", 30, 0, apierr.AIRateLimited},
		{"a wait past the caller's deadline is answered at once", 3, 2 * time.Second, apierr.AIRateLimited},
		{"a wait within the deadline is retried", 1, 0, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, ts := simtest.NewServer(t, sim.Config{Latency: simtest.ZeroLatency()})
			c, err := realtime.New(realtime.Params{BaseURL: ts.URL + "/v1", APIKey: simtest.TestKey, Timeout: 5 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.AddFault(sim.Fault{Endpoint: sim.EndpointRealtimeClientSecrets, Kind: sim.FaultRateLimit,
				RetryAfter: tc.retryAfter, Count: 1}); err != nil {
				t.Fatal(err)
			}
			ctx := t.Context()
			if tc.caller > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.caller)
				defer cancel()
			}
			_, err = c.Mint(ctx, session(), time.Minute)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("got %v, want a secret after one retry", err)
				}
				return
			}
			e := apierr.From(err)
			if e.Code != tc.want || e.RetryAfter != tc.retryAfter {
				t.Fatalf("got %s retry %d (%v), want %s retry %d", e.Code, e.RetryAfter, err, tc.want, tc.retryAfter)
			}
			if ctx.Err() != nil {
				t.Fatalf("answered after the caller's deadline: %v", ctx.Err())
			}
		})
	}
}
