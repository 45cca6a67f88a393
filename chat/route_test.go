package chat_test

import (
	"testing"

	"github.com/voxgate/voxgate/internal/config"
)

// A turn reserves its estimate priced at the dearest target of its route:
// any of them may answer. 4,000 tokens of input cost 400 µUSD on
// gpt-6-luna and 8,000 on claude-sonnet-5-5, so a day's cost limit of
// 5,000 admits the first route and refuses the second.
func TestReservationPricesTheDearestTarget(t *testing.T) {
	t.Parallel()
	limit := func(q *config.Quota) {
		p := q.Plans["free"]
		p.CostPerDayMicros = 5_000
		q.Plans["free"] = p
	}
	cases := []struct {
		name   string
		more   []string
		status int
		code   string
	}{
		{"one cheap target", nil, 200, ""},
		{"a dear target behind it", []string{"claude-sonnet-5-5"}, 429, "QUOTA_EXCEEDED"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, options{plans: limit, moreModels: tc.more})
			r := f.post(t, call{user: "u1", body: map[string]any{"message": "hi", "stream": false}})
			code := ""
			if e, ok := r.Body["error"].(map[string]any); ok {
				code, _ = e["code"].(string)
			}
			if r.Status != tc.status || code != tc.code {
				t.Fatalf("got %d %s (%v), want %d %s", r.Status, code, r.Body, tc.status, tc.code)
			}
		})
	}
}
