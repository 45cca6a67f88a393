package completions_test

import (
	"context"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
)

// A completion on a target that asks 12-hour cache writes, answered on
// the priority tier, is recorded with both through the whole path
// (adapter, router, the completion's record): its 12-hour writes in their
// class and its cost at twice the standard prices, computed here by hand
// from gpt-6.2-sol's published rates (input $2.00, 12-hour cache write
// $5.00, output $10.00 per 1M tokens), never by the code under test.
func TestCompletionsTwelveHourWritesOnPriority(t *testing.T) {
	t.Parallel()
	c := newComplFixture(t, func(o *options) { o.tier = "priority" })
	system := strings.Repeat("abcd", 1250) // 1,252 prompt tokens with "hello"; 1,152 cacheable
	resp, err := c.client("u-tier", "pro").Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{Model: "tiered",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.SystemMessage(system), userMsg("hello")}})
	if err != nil {
		t.Fatal(err)
	}
	var cost, written12h, in, out int64
	var tier string
	if err := c.pool.QueryRow(context.Background(), `SELECT coalesce(cost_micros, -1), service_tier, text_cache_write_12h_in, text_in, text_out
		FROM usage_records WHERE user_id = $1`, "u-tier").Scan(&cost, &tier, &written12h, &in, &out); err != nil {
		t.Fatal(err)
	}
	if in != 1252 || written12h != 1152 || tier != "priority" || out != resp.Usage.CompletionTokens {
		t.Fatalf("record: %d in, %d written for 12 h, tier %q, %d out; want 1252, 1152, priority, %d",
			in, written12h, tier, out, resp.Usage.CompletionTokens)
	}
	// 100 plain × $2 + 1,152 × $5 + out × $10 per 1M, ×2: in micros,
	// (100×2 + 1152×5 + out×10) × 2 / 1, half up (the sum is whole).
	if want := 2 * (100*2 + 1152*5 + out*10); cost != want {
		t.Fatalf("cost %d micros, want %d: 12-hour writes at their rate, the whole at priority's ×2", cost, want)
	}
}

// A target that asks flex (service_tier) on a project served on the
// default tier: the request carries it to the simulator, which serves and
// names flex, and the completion is recorded on flex at half the standard
// prices, by hand from gpt-6.2-sol's rates as above.
func TestCompletionsAskedTierServedAndPriced(t *testing.T) {
	t.Parallel()
	c := newComplFixture(t, func(o *options) { o.askTier = "flex" })
	system := strings.Repeat("abcd", 1250)
	resp, err := c.client("u-flex", "pro").Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{Model: "tiered",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.SystemMessage(system), userMsg("hello")}})
	if err != nil {
		t.Fatal(err)
	}
	var cost, out int64
	var tier string
	if err := c.pool.QueryRow(context.Background(), `SELECT coalesce(cost_micros, -1), service_tier, text_out
		FROM usage_records WHERE user_id = $1`, "u-flex").Scan(&cost, &tier, &out); err != nil {
		t.Fatal(err)
	}
	if tier != "flex" || out != resp.Usage.CompletionTokens {
		t.Fatalf("record on %q with %d out; want flex with %d", tier, out, resp.Usage.CompletionTokens)
	}
	// (100×2 + 1152×5 + out×10) ÷ 2, half up.
	if want := (100*2 + 1152*5 + out*10 + 1) / 2; cost != want {
		t.Fatalf("cost %d micros, want %d: the asked flex tier at half", cost, want)
	}
}
