package billing_test

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/voxgate/voxgate/billing"
	"github.com/voxgate/voxgate/internal/httpx"
	"github.com/voxgate/voxgate/internal/page"
)

var (
	oct1 = time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
	nov1 = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
)

// get serves target with h; path holds the route's wildcards as name,
// value pairs.
func get(t *testing.T, h httpx.HandlerFunc, target string, path ...string) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("GET", target, nil)
	for i := 0; i+1 < len(path); i += 2 {
		req.SetPathValue(path[i], path[i+1])
	}
	httpx.Handle(h).ServeHTTP(rec, req)
	return rec
}

// The summary's groups and total equal the records' own sums, exactly,
// for every grouping.
func TestSummaryTotalsEqualTheRecords(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	seed(t, fx.pool, 1000, "alice", "bob", "carol")
	ctx := context.Background()
	f := billing.Filter{From: oct1, To: nov1}
	// The records, summed in Go from the full list.
	var wantCost, wantRecords, wantUnpriced int64
	perDay := map[string]int64{}
	p, err := pageAll(ctx, fx.ledger, f)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range p {
		wantRecords++
		if r.CostMicros == nil {
			wantUnpriced++
			continue
		}
		wantCost += *r.CostMicros
		perDay[r.CreatedAt.Format(time.DateOnly)] += *r.CostMicros
	}
	if wantRecords == 0 || wantUnpriced == 0 {
		t.Fatalf("seed gave %d records, %d unpriced; want both", wantRecords, wantUnpriced)
	}
	for _, by := range []string{"day", "user", "model"} {
		s, err := fx.ledger.Summarize(ctx, f, by)
		if err != nil {
			t.Fatal(err)
		}
		var sum, n int64
		for _, g := range s.Groups {
			cost := mustInt64(t, g.CostMicros)
			sum += cost
			n += g.Records
			if by == "day" && cost != perDay[g.Key] {
				t.Errorf("day %s: got %d micros, want %d from the records", g.Key, cost, perDay[g.Key])
			}
		}
		if total := mustInt64(t, s.Total.CostMicros); total != wantCost || sum != wantCost || s.Total.Records != wantRecords || n != wantRecords || s.Total.Unpriced != wantUnpriced {
			t.Errorf("group_by=%s: got total %d micros over %d records (%d unpriced), groups sum %d; want %d over %d (%d unpriced)",
				by, total, s.Total.Records, s.Total.Unpriced, sum, wantCost, wantRecords, wantUnpriced)
		}
	}
}

func mustInt64(t *testing.T, s billing.Sum) int64 {
	t.Helper()
	v, ok := s.Int64()
	if !ok {
		t.Fatalf("sum %s does not fit int64", s)
	}
	return v
}

func pageAll(ctx context.Context, l *billing.Ledger, f billing.Filter) ([]billing.Record, error) {
	var out []billing.Record
	req := pageRequest(100, "")
	for {
		list, err := l.Records(ctx, f, req)
		if err != nil {
			return nil, err
		}
		out = append(out, list.Items...)
		if list.NextCursor == nil {
			return out, nil
		}
		req = pageRequest(100, *list.NextCursor)
	}
}

func TestSessionsPagesAndFilters(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	seed(t, fx.pool, 250, "alice", "bob")
	h := fx.ledger.HandleSessions
	seen := map[int64]bool{}
	var last time.Time
	cursor := ""
	pages := 0
	for {
		target := "/v1/admin/sessions?from=2026-10-01&to=2026-11-01&user_id=alice&kind=voice&limit=40"
		if cursor != "" {
			target += "&cursor=" + cursor
		}
		rec := get(t, h, target)
		if rec.Code != 200 {
			t.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
		var body struct {
			Items      []billing.Record `json:"items"`
			NextCursor *string          `json:"next_cursor"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
			t.Fatal(err)
		}
		pages++
		for _, r := range body.Items {
			if r.UserID != "alice" || r.Kind != "voice" || seen[r.ID] {
				t.Fatalf("record %d: user %s kind %s, seen before %v", r.ID, r.UserID, r.Kind, seen[r.ID])
			}
			if !last.IsZero() && r.CreatedAt.After(last) {
				t.Fatalf("not newest first: %v after %v", r.CreatedAt, last)
			}
			seen[r.ID], last = true, r.CreatedAt
		}
		if body.NextCursor == nil {
			break
		}
		cursor = *body.NextCursor
	}
	// alice holds the even i; voice the i not divisible by 3; all 250 fall
	// in October (250 × 37 min ≈ 6.4 days).
	want := 0
	for i := 1; i <= 250; i++ {
		if i%2 == 0 && i%3 != 0 {
			want++
		}
	}
	if len(seen) != want || pages != (want+39)/40 {
		t.Fatalf("%d records over %d pages, want %d over %d", len(seen), pages, want, (want+39)/40)
	}
}

func TestFinanceBadInput(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	cases := []struct {
		h      httpx.HandlerFunc
		target string
	}{
		{fx.ledger.HandleSessions, "/?user_id=alice;bob"},
		{fx.ledger.HandleSessions, "/?kind=voice;user_id=alice"},
		{fx.ledger.HandleSessions, "/?user_id=%zz"},
		{fx.ledger.HandleSessions, "/?userid=alice"},
		{fx.ledger.HandleSessions, "/?user_id=alice&user_id=bob"},
		{fx.ledger.HandleSessions, "/?user_id="},
		{fx.ledger.HandleSessions, "/?group_by=day"},
		{fx.ledger.HandleSummary, "/?user_id=alice;bob"},
		{fx.ledger.HandleSummary, "/?group_by=user&group_by=day"},
		{fx.ledger.HandleSummary, "/?limit=5"},
		{fx.ledger.HandleCSV, "/?user_id=alice;bob"},
		{fx.ledger.HandleCSV, "/?kind="},
		{fx.ledger.HandleCSV, "/?user=alice"},
		{fx.ledger.HandleCSV, "/?cursor=abc"},
		{fx.ledger.HandleSessions, "/?from=yesterday"},
		{fx.ledger.HandleSessions, "/?to=2026-13-01"},
		{fx.ledger.HandleSessions, "/?from=2026-11-02&to=2026-11-01"},
		{fx.ledger.HandleSessions, "/?kind=video"},
		{fx.ledger.HandleSessions, "/?limit=1000"},
		{fx.ledger.HandleSessions, "/?cursor=bogus"},
		{fx.ledger.HandleSummary, "/?group_by=week"},
		{fx.ledger.HandleCSV, "/?from=2026-11-01&to=2026-10-01"},
	}
	for _, tc := range cases {
		rec := get(t, tc.h, tc.target)
		var body struct {
			Error struct{ Code string } `json:"error"`
		}
		_ = json.Unmarshal(rec.Body.Bytes(), &body)
		if rec.Code != http.StatusBadRequest || body.Error.Code != "INVALID_REQUEST" {
			t.Errorf("%s: %d %s, want 400 INVALID_REQUEST", tc.target, rec.Code, rec.Body)
		}
	}
}

// TestFinanceFilterNeverWidens: a user_id filter the URL parser would
// drop (a raw ';') answers 400, never every user's records; the same
// filter well encoded answers that one user's.
func TestFinanceFilterNeverWidens(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	seed(t, fx.pool, 30, "alice", "bob", "x;y")
	const window = "from=2026-10-01&to=2026-11-01&"
	tests := []struct {
		name       string
		h          httpx.HandlerFunc
		query      string
		wantStatus int
		wantUsers  string // the users in the answer, comma-separated
	}{
		{"sessions, raw semicolon", fx.ledger.HandleSessions, "user_id=x;y", 400, ""},
		{"sessions, escaped semicolon", fx.ledger.HandleSessions, "user_id=x%3By", 200, "x;y"},
		{"summary, raw semicolon", fx.ledger.HandleSummary, "group_by=user&user_id=x;y", 400, ""},
		{"summary, escaped semicolon", fx.ledger.HandleSummary, "group_by=user&user_id=x%3By", 200, "x;y"},
		{"csv, raw semicolon", fx.ledger.HandleCSV, "user_id=x;y", 400, ""},
		{"csv, escaped semicolon", fx.ledger.HandleCSV, "user_id=x%3By", 200, "x;y"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := get(t, tc.h, "/?"+window+tc.query)
			if rec.Code != tc.wantStatus {
				t.Fatalf("got status %d, want %d: %.200s", rec.Code, tc.wantStatus, rec.Body)
			}
			if tc.wantStatus != 200 {
				return
			}
			if got := strings.Join(usersIn(t, rec), ","); got != tc.wantUsers {
				t.Errorf("got users %q, want %q", got, tc.wantUsers)
			}
		})
	}
}

// usersIn lists the distinct users of a sessions page, a by-user summary
// or a CSV export, sorted.
func usersIn(t *testing.T, rec *httptest.ResponseRecorder) []string {
	t.Helper()
	seen := map[string]bool{}
	if strings.HasPrefix(rec.Header().Get("Content-Type"), "text/csv") {
		rows, err := csv.NewReader(rec.Body).ReadAll()
		if err != nil || len(rows) < 2 {
			t.Fatalf("csv: %d rows, %v", len(rows), err)
		}
		for _, row := range rows[1:] {
			seen[row[slices.Index(rows[0], "user_id")]] = true
		}
	} else {
		var body struct {
			Items []struct {
				UserID string `json:"user_id"`
			} `json:"items"`
			Groups []struct{ Key string } `json:"groups"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
			t.Fatal(err)
		}
		for _, it := range body.Items {
			seen[it.UserID] = true
		}
		for _, g := range body.Groups {
			seen[g.Key] = true
		}
	}
	return slices.Sorted(maps.Keys(seen))
}

func TestCSVIsRFC4180AndDefusesFormulas(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	ctx := context.Background()
	users := []string{"=cmd|' /C calc'!A0", "+1", "-2", "@SUM(A1)", "\tx", `quote"and,comma`, "line\nbreak", "plain",
		"a;=cmd|' /C calc'!A0", "b, +1", "c\n@SUM(A1)"}
	for i, u := range users {
		r := voiceRecord("vs_csv_" + strconv.Itoa(i))
		r.UserID = u
		if _, err := fx.ledger.Write(ctx, fx.pool, r); err != nil {
			t.Fatal(err)
		}
	}
	rec := get(t, fx.ledger.HandleCSV, "/v1/admin/costs.csv")
	if rec.Code != 200 || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/csv") {
		t.Fatalf("status %d, type %q", rec.Code, rec.Header().Get("Content-Type"))
	}
	if !strings.Contains(rec.Body.String(), "\r\n") {
		t.Fatal("lines do not end in CRLF")
	}
	rows, err := csv.NewReader(strings.NewReader(rec.Body.String())).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(users)+1 {
		t.Fatalf("%d rows, want %d", len(rows), len(users)+1)
	}
	col := map[string]int{}
	for i, name := range rows[0] {
		col[name] = i
	}
	got := map[string]bool{}
	for _, row := range rows[1:] {
		got[row[col["user_id"]]] = true
		if row[col["cost_micros"]] != "75240" || row[col["unpriced"]] != "false" {
			t.Errorf("cost %q unpriced %q, want 75240 false", row[col["cost_micros"]], row[col["unpriced"]])
		}
	}
	for _, want := range []string{"'=cmd|' /C calc'!A0", "'+1", "'-2", "'@SUM(A1)", "'\tx", `quote"and,comma`, "line\nbreak", "plain",
		"'a;'=cmd|' /C calc'!A0", "'b, '+1", "'c\n'@SUM(A1)"} {
		if !got[want] {
			t.Errorf("user cell %q missing; got %v", want, got)
		}
	}
}

func pageRequest(limit int, cursor string) page.Request {
	r := httptest.NewRequest("GET", "/?limit="+strconv.Itoa(limit)+"&cursor="+cursor, nil)
	req, err := page.Parse(r)
	if err != nil {
		panic(err)
	}
	return req
}
