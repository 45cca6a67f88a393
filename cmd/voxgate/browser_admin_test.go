package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/voxgate/voxgate/billing"
	"github.com/voxgate/voxgate/internal/auth"
	"github.com/voxgate/voxgate/internal/pgtest"
	"github.com/voxgate/voxgate/internal/testkit"
	"github.com/voxgate/voxgate/web"
)

const evilUser = `<img src=x onerror="window.__xss=1">`

// seedLedger writes n records over the last five days: three users (one
// whose id is markup), two kinds, and every seventh record unpriced.
func seedLedger(t *testing.T, m *Main, n int) {
	t.Helper()
	ctx := context.Background()
	users := []string{"alice", "bob", evilUser}
	for i := range n {
		r := billing.Record{UserID: users[i%3], SessionID: fmt.Sprintf("s-%03d", i), Kind: "voice", Provider: "openai",
			Model: "gpt-realtime-2.1", DurationMS: int64(1000 + i*37), UsageSource: "server_observed",
			Usage: billing.Usage{TextIn: int64(100 + i), TextOut: int64(50 + i), AudioIn: int64(1000 * i), AudioOut: int64(777 * i)}}
		if i%2 == 1 {
			r.Kind, r.Model, r.TurnID, r.UsageSource = "chat", "gpt-6-luna", "t1", "provider_reported"
			r.Usage = billing.Usage{TextIn: int64(1000 + 13*i), TextCachedIn: int64(i), TextOut: int64(300 + i)}
		}
		if i%7 == 0 {
			r.Model = "a-model-with-no-price"
		}
		if _, err := m.Ledger.Write(ctx, m.Pool, r); err != nil {
			t.Fatal(err)
		}
	}
	// Spread them over five days, noon UTC, so every zone's day holds some.
	if _, err := m.Pool.Exec(ctx, `UPDATE usage_records SET created_at = date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'
		- (id % 5) * interval '1 day' + interval '12 hours' - id * interval '1 second'`); err != nil {
		t.Fatal(err)
	}
}

// apiTotal is the API's own summary total for query q, as dollars.
func apiTotal(t *testing.T, base, tok, q string) (string, int) {
	t.Helper()
	status, _, body := call(t, "GET", base+"/v1/admin/costs/summary?"+q, tok, nil)
	var s struct {
		Groups []json.RawMessage `json:"groups"`
		Total  struct {
			CostMicros json.Number `json:"cost_micros"`
		} `json:"total"`
	}
	d := json.NewDecoder(strings.NewReader(body))
	d.UseNumber()
	if err := d.Decode(&s); status != 200 || err != nil {
		t.Fatalf("summary: %d %s", status, body)
	}
	v, ok := new(big.Int).SetString(string(s.Total.CostMicros), 10)
	if !ok {
		t.Fatalf("total %q", s.Total.CostMicros)
	}
	return web.Dollars(v), len(s.Groups)
}

func TestAdminPageInChromium(t *testing.T) {
	t.Parallel()
	if !inLoopbackNamespace(t) {
		return
	}
	m, _ := startMain(t, pgtest.URL(t), nil)
	seedLedger(t, m, 60)
	admin := mint(t, "finance-lead", "finance", "")
	b := newBrowser(t)
	base := m.URL()

	b.run(t, chromedp.Navigate(base+"/admin?tz=UTC#token="+url.QueryEscape(admin)))
	b.waitJS(t, "the summaries and the chart", `!!document.getElementById('total-model') && !!document.getElementById('total-user') && !!document.getElementById('total-day') && document.querySelectorAll('#chart rect.bar').length > 0`)
	b.waitJS(t, "the first page of records", `document.querySelectorAll('#records tbody tr').length === 50`)

	// The summary totals are the API's, for the same range the page asked.
	from := evalJS[string](t, b, `new Date(document.getElementById('f-from').value + 'T00:00:00Z').toISOString()`)
	to := evalJS[string](t, b, `new Date(Date.parse(document.getElementById('f-to').value + 'T00:00:00Z') + 864e5).toISOString()`)
	q := url.Values{"from": {from}, "to": {to}}
	want, days := apiTotal(t, base, admin, q.Encode()+"&group_by=day")
	if days != 5 {
		t.Fatalf("seeded records fall on %d days, want 5", days)
	}
	for _, id := range []string{"total-day", "total-user", "total-model"} {
		got := evalJS[string](t, b, `document.getElementById('`+id+`').textContent`)
		if got != want {
			t.Errorf("%s: page shows %q, the API %q", id, got, want)
		}
	}
	bars := evalJS[int](t, b, `document.querySelectorAll('#chart svg rect.bar').length`)
	if bars != days {
		t.Errorf("chart: got %d bars, want %d", bars, days)
	}

	// Unpriced is shown as such, never as $0; the markup user id is text.
	unpriced := evalJS[int](t, b, `[...document.querySelectorAll('#records td.unpriced')].filter(td => td.textContent === 'unpriced').length`)
	zero := evalJS[int](t, b, `[...document.querySelectorAll('#records td, table.sum td')].filter(td => td.textContent === '$0.000000').length`)
	if unpriced == 0 || zero != 0 {
		t.Errorf("records: %d cells say unpriced, %d say $0.000000; want some and none", unpriced, zero)
	}
	evil := evalJS[struct {
		Cells int  `json:"cells"`
		Imgs  int  `json:"imgs"`
		XSS   bool `json:"xss"`
	}](t, b, `({cells: [...document.querySelectorAll('#records td')].filter(td => td.textContent === `+jsString(evilUser)+`).length,
		imgs: document.querySelectorAll('img').length, xss: !!window.__xss})`)
	if evil.Cells == 0 || evil.Imgs != 0 || evil.XSS {
		t.Errorf("markup user id: %d cells show it as text, %d img elements, script ran: %v", evil.Cells, evil.Imgs, evil.XSS)
	}

	// A record's detail.
	b.run(t, chromedp.Click(chromedp.CSS(`#records tbody tr:nth-child(3)`)))
	b.waitJS(t, "the record's detail", `document.querySelectorAll('#detail dt').length > 5`)

	// Paging: 60 records are 50 and 10.
	b.run(t, chromedp.Click(chromedp.CSS(`#next`)))
	b.waitJS(t, "the second page", `document.getElementById('page-no').textContent === 'page 2' && document.querySelectorAll('#records tbody tr').length === 10`)
	if !evalJS[bool](t, b, `document.getElementById('next').disabled`) {
		t.Error("next page is offered past the last record")
	}

	// The CSV export carries the same filters and has every record.
	b.run(t, chromedp.Click(chromedp.CSS(`#csv`)))
	b.waitJS(t, "the CSV", `document.getElementById('export-state').textContent.startsWith('CSV ready')`)
	size := evalJS[string](t, b, `document.getElementById('export-state').textContent`)
	status, _, csv := call(t, "GET", base+"/v1/admin/costs.csv?"+q.Encode(), admin, nil)
	if status != 200 || size != fmt.Sprintf("CSV ready (%d bytes).", len(csv)) || strings.Count(csv, "\r\n") != 61 {
		t.Errorf("CSV: page says %q; the API gave %d, %d bytes, %d lines", size, status, len(csv), strings.Count(csv, "\r\n"))
	}

	// A filter: bob's records only, and the totals follow.
	b.run(t, chromedp.SetValue(chromedp.CSS(`#f-user`), "bob"), chromedp.Click(chromedp.CSS(`#filters button[type=submit]`)))
	b.waitJS(t, "bob's records", `(() => { const rows = [...document.querySelectorAll('#records tbody tr')];
		return rows.length === 20 && rows.every(r => r.cells[2].textContent === 'bob'); })()`)
	wantBob, _ := apiTotal(t, base, admin, q.Encode()+"&user_id=bob&group_by=model")
	b.waitJS(t, "bob's total", `document.getElementById('total-model') && document.getElementById('total-model').textContent === `+jsString(wantBob))
	b.screenshot(t, "admin.png")
	b.noViolations(t)

	// A plain user's token is refused with the 403 message; an expired one
	// says so.
	b.run(t, chromedp.Navigate(base+"/admin#token="+url.QueryEscape(mint(t, "just-a-user", "", "pro"))))
	b.waitJS(t, "the 403 message", `document.getElementById('sum-day-state').textContent.includes('admin or finance role') && document.getElementById('records-state').classList.contains('error')`)
	expired, err := auth.Mint(auth.MintParams{Secret: []byte(testSecret), Subject: "finance-lead", Role: "finance", TTL: time.Hour, Now: time.Now().Add(-2 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	b.run(t, chromedp.Navigate(base+"/admin#token="+url.QueryEscape(expired)))
	b.waitJS(t, "the expired-token message", `document.getElementById('records-state').textContent.includes('expired')`)
	b.noViolations(t)

	// The check above can fail: an inline style the policy refuses is
	// reported by the browser and seen by the listener.
	b.run(t, chromedp.Evaluate[chromedp.Void](`document.body.setAttribute('style', 'color: red')`))
	testkit.Eventually(t, context.Background(), "the CSP report of an inline style", func() bool {
		return strings.Contains(b.console(), "Content Security Policy")
	})
}

// jsString quotes s as a JavaScript string literal.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
