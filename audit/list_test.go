package audit

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/page"
)

// list calls HandleList with query q and returns its status and body.
func list(t *testing.T, l *Log, q string) (int, page.List[Row], string) {
	t.Helper()
	w := httptest.NewRecorder()
	err := l.HandleList(w, httptest.NewRequest("GET", "/v1/admin/audit?"+q, nil))
	if err != nil {
		return apierr.From(err).Status(), page.List[Row]{}, apierr.From(err).Message
	}
	var out page.List[Row]
	if err := json.Unmarshal(w.Body.Bytes(), &out); err != nil {
		t.Fatalf("list body: %v %s", err, w.Body)
	}
	return w.Code, out, w.Body.String()
}

// The listing filters by user, status and kind, pages newest first
// through every row exactly once, and refuses a bad parameter with 400
// and a message saying what is wrong.
func TestList(t *testing.T) {
	t.Parallel()
	l, _ := newLog(t)
	ctx := context.Background()
	for i := range 25 {
		r := chatRow(fmt.Sprintf("turn_%02d", i))
		if i%5 == 0 {
			r.UserID = "u2"
		}
		if err := l.Begin(ctx, r); err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			r.Status = Degraded
			if err := l.Finish(ctx, r); err != nil {
				t.Fatal(err)
			}
		}
	}
	seen := map[string]bool{}
	cursor := ""
	for pages := 0; ; pages++ {
		code, got, body := list(t, l, "limit=10&cursor="+cursor)
		if code != 200 {
			t.Fatalf("page %d: %d %s", pages, code, body)
		}
		for _, r := range got.Items {
			if seen[r.ID] {
				t.Errorf("%s listed twice", r.ID)
			}
			seen[r.ID] = true
		}
		if got.NextCursor == nil {
			break
		}
		cursor = *got.NextCursor
	}
	if len(seen) != 25 {
		t.Errorf("paged through %d rows, want 25", len(seen))
	}
	for _, tc := range []struct {
		q    string
		want int
	}{
		{"user_id=u2", 5}, {"status=degraded", 13}, {"status=pending", 12}, {"kind=chat&status=pending&user_id=u1", 10},
		{"kind=voice_tool", 0}, {"to=2000-01-01&from=1999-01-01", 0},
	} {
		code, got, body := list(t, l, tc.q+"&limit=100")
		if code != 200 || len(got.Items) != tc.want {
			t.Errorf("%s: %d, %d rows (%s), want %d", tc.q, code, len(got.Items), body, tc.want)
		}
	}
	for q, want := range map[string]string{
		"status=ok":                     "status must be",
		"status=":                       "status is empty",
		"kind=voice":                    "kind must be",
		"from=yesterday":                "from must be",
		"from=2026-02-01&to=2026-01-01": "from must be before to",
		"limit=0":                       "limit must be",
		"limit=101":                     "limit must be",
		"cursor=nope":                   "cursor is not valid",
		"userid=u1":                     "Unknown query parameter",
		"user_id=a&user_id=b":           "more than once",
	} {
		code, _, msg := list(t, l, q)
		if code != 400 || !strings.Contains(msg, want) {
			t.Errorf("%s: %d %q, want 400 saying %q", q, code, msg, want)
		}
	}
}

// Migration 0089 is 0068's contract step: the trigger that mapped the
// 0066 statuses, which every insert paid, and its functions are gone.
func TestLegacyTriggerDropped(t *testing.T) {
	t.Parallel()
	_, pool := newLog(t)
	var n int
	if err := pool.QueryRow(context.Background(), `SELECT (SELECT count(*) FROM pg_trigger WHERE tgname = 'ai_audit_legacy_insert')
		+ (SELECT count(*) FROM pg_proc WHERE proname IN ('ai_audit_legacy_insert', 'ai_audit_legacy_status'))`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("%d of the legacy trigger and its functions remain, want none", n)
	}
}

// FuzzParseFilter: the admin's query is untrusted text; the filter never
// panics, and what it accepts is in the vocabulary with from before to.
func FuzzParseFilter(f *testing.F) {
	for _, s := range []string{"status=success&kind=chat", "from=2026-01-01&to=2026-02-01", "user_id=%00", "status=ok", "to=2026-01-01T00:00:00Z"} {
		f.Add(s)
	}
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		fl, err := ParseFilter(q, now)
		if err != nil {
			return
		}
		if !fl.From.Before(fl.To) {
			t.Fatalf("%q: from %v not before to %v", raw, fl.From, fl.To)
		}
		if fl.Status != "" && fl.Status != Pending && !slices.Contains(Finals, fl.Status) {
			t.Fatalf("%q: status %q accepted", raw, fl.Status)
		}
		if fl.Kind != "" && !slices.Contains(Kinds, fl.Kind) {
			t.Fatalf("%q: kind %q accepted", raw, fl.Kind)
		}
	})
}
