package completions_test

import (
	"context"
	"errors"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/voxgate/voxgate/internal/auth"
	"github.com/voxgate/voxgate/internal/testgraph"
	"github.com/voxgate/voxgate/quota"
)

// An Idempotency-Key keys a completion's admission (docs/quota.md): a
// retry after an admission whose reply was lost gets that admission's
// ticket and is counted once; one sent while the key's ticket is held is
// 409 CONFLICT, counting nothing; a key that is not 1–255 printable ASCII
// characters is 400. The lost reply's state (a keyed ticket no caller
// took) is made directly, as the quota package's failover test makes it
// through a proxy that drops the reply.
func TestCompletionsIdempotencyKey(t *testing.T) {
	t.Parallel()
	c := newComplFixture(t)
	ctx := context.Background()
	qs, err := quota.New(quota.Params{Pool: c.pool, Config: testgraph.OpenQuota()})
	if err != nil {
		t.Fatal(err)
	}
	params := openai.ChatCompletionNewParams{Model: "chat", Messages: []openai.ChatCompletionMessageParamUnion{userMsg("Hi")}}
	status := func(err error) int {
		var ae *openai.Error
		if errors.As(err, &ae) {
			return ae.StatusCode
		}
		return 0
	}

	if _, err := c.client("u-badkey", "").Chat.Completions.New(ctx, params, option.WithHeader("Idempotency-Key", "has space")); status(err) != 400 {
		t.Fatalf("a key with a space: got %v, want 400", err)
	}

	lost, err := qs.Admit(ctx, auth.Principal{UserID: "u-lost"}, quota.Estimate{Tokens: 10, Calls: 1, Key: "k-lost"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.pool.Exec(ctx, `UPDATE quota_tickets SET admit_taken = false WHERE id = $1`, lost.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := c.client("u-lost", "").Chat.Completions.New(ctx, params, option.WithHeader("Idempotency-Key", "k-lost")); err != nil {
		t.Fatalf("the retry after a lost admission reply: %v", err)
	}
	if d := c.day(t, "u-lost"); d.requests != 1 || d.tickets != 0 {
		t.Fatalf("after the retry: got %d requests, %d tickets; want 1 (the lost admission's) and 0 (settled)", d.requests, d.tickets)
	}

	held, err := qs.Admit(ctx, auth.Principal{UserID: "u-held"}, quota.Estimate{Tokens: 10, Calls: 1, Key: "k-held"})
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release(ctx)
	if _, err := c.client("u-held", "").Chat.Completions.New(ctx, params, option.WithHeader("Idempotency-Key", "k-held")); status(err) != 409 {
		t.Fatalf("a key whose ticket is held: got %v, want 409", err)
	}
	if d := c.day(t, "u-held"); d.requests != 1 || d.tickets != 1 {
		t.Fatalf("after the refusal: got %d requests, %d tickets; want 1 and 1", d.requests, d.tickets)
	}
}
