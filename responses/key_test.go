package responses_test

import (
	"context"
	"errors"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	oresp "github.com/openai/openai-go/v3/responses"

	"github.com/voxgate/voxgate/internal/auth"
	"github.com/voxgate/voxgate/quota"
)

// An Idempotency-Key keys a response's admission as it keys a
// completion's (docs/quota.md, "Keyed admission"): a retry after an
// admission whose reply was lost runs on that admission's ticket, counted
// once; one sent while the key's ticket is held is 409, counting nothing;
// a key that is not 1–255 printable ASCII characters is 400. The lost
// reply's state (a keyed ticket no caller took) is made directly.
func TestResponsesIdempotencyKey(t *testing.T) {
	t.Parallel()
	f := newFixture(t, options{})
	ctx := context.Background()
	params := oresp.ResponseNewParams{Model: "chat", Input: text("Hi")}
	status := func(err error) int {
		var ae *openai.Error
		if errors.As(err, &ae) {
			return ae.StatusCode
		}
		return 0
	}
	day := func(user string) (requests, tickets int64) {
		t.Helper()
		if err := f.g.Pool.QueryRow(ctx, `SELECT coalesce(max(day_requests), 0),
			(SELECT count(*) FROM quota_tickets WHERE user_id = $1) FROM quota_users WHERE user_id = $1`, user).Scan(&requests, &tickets); err != nil {
			t.Fatal(err)
		}
		return requests, tickets
	}

	if _, err := f.client("u-badkey").Responses.New(ctx, params, option.WithHeader("Idempotency-Key", "has space")); status(err) != 400 {
		t.Fatalf("a key with a space: got %v, want 400", err)
	}

	lost, err := f.g.Quota.Admit(ctx, auth.Principal{UserID: "u-lost"}, quota.Estimate{Tokens: 10, Calls: 1, Key: "k-lost"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.g.Pool.Exec(ctx, `UPDATE quota_tickets SET admit_taken = false WHERE id = $1`, lost.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := f.client("u-lost").Responses.New(ctx, params, option.WithHeader("Idempotency-Key", "k-lost")); err != nil {
		t.Fatalf("the retry after a lost admission reply: %v", err)
	}
	if r, n := day("u-lost"); r != 1 || n != 0 {
		t.Fatalf("after the retry: %d requests, %d tickets; want 1 (the lost admission's) and 0 (settled)", r, n)
	}

	held, err := f.g.Quota.Admit(ctx, auth.Principal{UserID: "u-held"}, quota.Estimate{Tokens: 10, Calls: 1, Key: "k-held"})
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release(ctx)
	if _, err := f.client("u-held").Responses.New(ctx, params, option.WithHeader("Idempotency-Key", "k-held")); status(err) != 409 {
		t.Fatalf("a key whose ticket is held: got %v, want 409", err)
	}
	if r, n := day("u-held"); r != 1 || n != 1 {
		t.Fatalf("after the refusal: %d requests, %d tickets; want 1 and 1", r, n)
	}
}
