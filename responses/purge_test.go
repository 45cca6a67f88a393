package responses_test

import (
	"context"
	"testing"
)

// TestPurgeFollowsChatRetention: stored responses older than
// chat.retention_days (90 by default) are purged, newer ones kept.
func TestPurgeFollowsChatRetention(t *testing.T) {
	t.Parallel()
	f := newFixture(t, options{})
	ctx := context.Background()
	for _, row := range []struct{ id, age string }{{"resp_old", "91 days"}, {"resp_new", "89 days"}} {
		if _, err := f.g.Pool.Exec(ctx, `INSERT INTO stored_responses (id, user_id, created_at, response, input)
			VALUES ($1, 'u-purge', now() - $2::interval, '{}', '[]')`, row.id, row.age); err != nil {
			t.Fatal(err)
		}
	}
	n, err := f.svc.Purge(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n != 1 || f.count(t, `SELECT count(*) FROM stored_responses WHERE id = 'resp_old'`) != 0 ||
		f.count(t, `SELECT count(*) FROM stored_responses WHERE id = 'resp_new'`) != 1 {
		t.Errorf("purged %d; want resp_old gone and resp_new kept", n)
	}
}
