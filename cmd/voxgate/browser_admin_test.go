package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/voxgate/voxgate/billing"
	"github.com/voxgate/voxgate/internal/auth"
	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/internal/pgtest"
	"github.com/voxgate/voxgate/internal/testkit"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
	"github.com/voxgate/voxgate/web"
)

// repriceTable doubles gpt-6-luna's prices and keeps gpt-realtime-2.1's.
const repriceTable = `version: "preview-1"
models:
  gpt-realtime-2.1:
    source: the current price
    date: "2026-11-24"
    text_in: 4000000
    text_cached_in: 400000
    text_out: 24000000
    audio_in: 32000000
    audio_cached_in: 400000
    audio_out: 64000000
  gpt-6-luna:
    source: a proposed price, twice the current
    date: "2026-11-24"
    text_in: 200000
    text_cached_in: 20000
    text_cache_write_in: 250000
    text_out: 1000000
`

const evilUser = `<img src=x onerror="window.__xss=1">`

// seedLedger writes n records over the last five days: three users (one
// whose id is markup), two kinds, and every seventh record unpriced.
func seedLedger(t *testing.T, m *Main, n int) {
	t.Helper()
	ctx := context.Background()
	users := []string{"alice", "bob", evilUser}
	for i := range n {
		r := billing.Record{UserID: users[i%3], SessionID: fmt.Sprintf("s-%03d", i), Kind: "voice", Mode: "sideband", Provider: "openai",
			Model: "gpt-realtime-2.1", DurationMS: int64(1000 + i*37), UsageSource: "server_observed",
			Usage: billing.Usage{TextIn: int64(100 + i), TextOut: int64(50 + i), AudioIn: int64(1000 * i), AudioOut: int64(777 * i)}}
		if i%2 == 1 {
			r.Kind, r.Mode, r.Model, r.TurnID, r.UsageSource = "chat", "", "gpt-6-luna", "t1", "provider_reported"
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
	// A record's mode is its voice session's; these have no session row.
	if _, err := m.Pool.Exec(ctx, `UPDATE usage_records SET mode = 'sideband' WHERE kind = 'voice'`); err != nil {
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
	_, ts := simtest.NewServer(t, sim.Config{Latency: simtest.ZeroLatency()})
	m, _ := startMain(t, pgtest.URL(t), func(c *config.Config) {
		c.Secrets.OpenAIAPIKey, c.Secrets.OpenAIBaseURL = simtest.TestKey, ts.URL+"/v1"
	})
	seedLedger(t, m, 60)
	admin := mint(t, "finance-lead", "finance", "")
	b := newBrowser(t)
	base := m.URL()

	b.run(t, chromedp.Navigate(base+"/admin?tz=UTC#token="+url.QueryEscape(admin)))
	b.waitJS(t, "the summaries and the chart", `!!document.getElementById('total-model') && !!document.getElementById('total-user') && !!document.getElementById('total-day') && document.querySelectorAll('#chart rect.bar').length > 0`)
	b.waitJS(t, "the first page of records", `document.querySelectorAll('#records tbody tr').length === 50`)

	// The summary totals are the API's, for the same range the page asked.
	from := evalJS[string](t, b, `document.getElementById('f-from').value`)
	to := evalJS[string](t, b, `new Date(Date.parse(document.getElementById('f-to').value + 'T00:00:00Z') + 864e5).toISOString().slice(0, 10)`)
	q := url.Values{"from": {from}, "to": {to}, "tz": {"UTC"}}
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

	// A priced record's detail: its cost lines add up to its cost.
	b.run(t, chromedp.Evaluate[chromedp.Void](`[...document.querySelectorAll('#records tbody tr')].find(tr => tr.cells[17].textContent !== 'unpriced').click()`))
	b.waitJS(t, "the record's detail", `!!document.getElementById('lines-total')`)
	if got := evalJS[[]string](t, b, `[document.getElementById('lines-total').textContent, document.querySelector('#records tr.sel').cells[17].textContent, String(document.querySelectorAll('#lines tbody tr').length)]`); got[0] != got[1] || got[2] < "3" {
		t.Errorf("detail: lines total %q, the record's cost %q, %s rows; want equal, with lines", got[0], got[1], got[2])
	}

	// Paging: 60 records are 50 and 10.
	b.run(t, chromedp.Click(chromedp.CSS(`#next`)))
	b.waitJS(t, "the second page", `document.getElementById('page-no').textContent === 'page 2' && document.querySelectorAll('#records tbody tr').length === 10`)
	if !evalJS[bool](t, b, `document.getElementById('next').disabled`) {
		t.Error("next page is offered past the last record")
	}

	// The CSV and JSONL exports carry the same filters, have every record,
	// and their manifests match the summary.
	wantMicros := evalJS[string](t, b, `document.getElementById('total-day').textContent`)
	for _, ext := range []string{"csv", "jsonl"} {
		b.run(t, chromedp.Click(chromedp.CSS(`#`+ext)))
		b.waitJS(t, "the "+ext, `document.getElementById('manifest').dataset.ext === '`+ext+`' && document.getElementById('export-state').textContent.endsWith('ready.')`)
		got := evalJS[struct {
			Rows  string `json:"rows"`
			Cost  string `json:"cost"`
			Size  string `json:"size"`
			Match bool   `json:"match"`
			AsOf  string `json:"asOf"`
			LagMS string `json:"lagMs"`
		}](t, b, `(() => { const m = document.getElementById('manifest'); return {rows: m.dataset.rows, cost: m.dataset.cost, size: m.dataset.size, match: m.textContent.includes('(matches the summary)'), asOf: m.dataset.asOf, lagMs: m.dataset.lagMs}; })()`)
		status, _, file := call(t, "GET", base+"/v1/admin/costs."+ext+"?"+q.Encode(), admin, nil)
		lines := strings.Count(file, "\n")
		size := len(file)
		if ext == "jsonl" {
			// The manifest line carries as_of and lag_ms, read at each
			// export's own moment, and RFC 3339 drops a fraction's trailing
			// zeros: the API's are counted as the page's were.
			var m struct {
				Manifest billing.Freshness `json:"manifest"`
			}
			if err := json.Unmarshal([]byte(file[strings.LastIndex(strings.TrimSuffix(file, "\n"), "\n")+1:]), &m); err != nil {
				t.Fatalf("jsonl: the last line: %v", err)
			}
			size += len(got.AsOf) - len(m.Manifest.AsOf.Format(time.RFC3339Nano)) + len(got.LagMS) - len(strconv.FormatInt(m.Manifest.LagMS, 10))
		}
		if status != 200 || got.Rows != "60" || got.Size != fmt.Sprint(size) || !got.Match || lines != 61 || got.AsOf == "" {
			t.Errorf("%s: page shows %+v (summary %s); the API gave %d, %d bytes, %d lines", ext, got, wantMicros, status, len(file), lines)
		}
		if last := file[strings.LastIndex(strings.TrimSuffix(file, "\n"), "\n")+1:]; ext == "jsonl" && (!strings.HasPrefix(last, `{"manifest":{`) || !strings.Contains(last, `"rows":60`)) {
			t.Errorf("jsonl: the last line is not the manifest: %s", last)
		}
	}

	// A filter: bob's records only, and the totals follow.
	b.run(t, chromedp.SetValue(chromedp.CSS(`#f-user`), "bob"), chromedp.Click(chromedp.CSS(`#filters button[type=submit]`)))
	b.waitJS(t, "bob's records", `(() => { const rows = [...document.querySelectorAll('#records tbody tr')];
		return rows.length === 20 && rows.every(r => r.cells[2].textContent === 'bob'); })()`)
	wantBob, _ := apiTotal(t, base, admin, q.Encode()+"&user_id=bob&group_by=model")
	b.waitJS(t, "bob's total", `document.getElementById('total-model') && document.getElementById('total-model').textContent === `+jsString(wantBob))
	// Reconciliation: the simulator billed none of the seeded records, so
	// each day the ledger priced is red, as the API says.
	b.run(t, chromedp.Click(chromedp.CSS(`#reconcile-form button`)))
	b.waitJS(t, "the reconciliation", `document.querySelectorAll('#reconcile tbody tr').length > 0`)
	status, _, rec := call(t, "GET", base+"/v1/admin/costs/reconcile?from="+from+"&to="+to+"&threshold_micros=1000", admin, nil)
	var api struct {
		RedDays int `json:"red_days"`
		Days    []struct {
			Models []struct {
				Red bool `json:"red"`
			} `json:"models"`
		} `json:"days"`
	}
	if err := json.Unmarshal([]byte(rec), &api); status != 200 || err != nil || api.RedDays == 0 {
		t.Fatalf("reconcile: %d %s", status, rec)
	}
	redRows := 0
	for _, d := range api.Days {
		for _, x := range d.Models {
			if x.Red {
				redRows++
			}
		}
	}
	if !evalJS[bool](t, b, `[...document.querySelectorAll('#reconcile tbody tr')].every(r => /^\d+$/.test(r.cells[2].textContent) && r.cells[5].textContent.startsWith('$'))`) {
		t.Error("reconcile: a row's ledger tokens or cost is not shown")
	}
	if got := evalJS[int](t, b, `document.querySelectorAll('#reconcile tbody tr.red').length`); got != redRows ||
		!strings.HasPrefix(evalJS[string](t, b, `document.getElementById('reconcile-state').textContent`), fmt.Sprintf("%d red day", api.RedDays)) {
		t.Errorf("reconcile: the page shows %d red rows, the API %d (%d red days)", got, redRows, api.RedDays)
	}

	// Repricing preview of bob's records with a table uploaded from a
	// file: the page's rows are the API's for the same body and filters,
	// and nothing is written.
	tablePath := filepath.Join(t.TempDir(), "prices.yaml")
	if err := os.WriteFile(tablePath, []byte(repriceTable), 0o600); err != nil {
		t.Fatal(err)
	}
	b.run(t, chromedp.SetUploadFiles(chromedp.CSS(`#reprice-file`), []string{tablePath}))
	b.waitJS(t, "the uploaded table", `document.getElementById('reprice-table').value === `+jsString(repriceTable))
	b.run(t, chromedp.Click(chromedp.CSS(`#reprice-form button`)))
	b.waitJS(t, "the repricing", `!!document.getElementById('reprice-total')`)
	bq := url.Values{"from": {from}, "to": {to}, "tz": {"UTC"}, "user_id": {"bob"}}
	status, _, rp := call(t, "POST", base+"/v1/admin/costs/reprice?"+bq.Encode(), admin, strings.NewReader(repriceTable))
	var rep struct {
		Models []json.RawMessage `json:"models"`
		Total  struct {
			Old  json.Number `json:"old_cost_micros"`
			New  json.Number `json:"new_cost_micros"`
			Diff json.Number `json:"difference_micros"`
		} `json:"total"`
	}
	d := json.NewDecoder(strings.NewReader(rp))
	d.UseNumber()
	if err := d.Decode(&rep); status != 200 || err != nil {
		t.Fatalf("reprice: %d %s", status, rp)
	}
	usd := func(n json.Number) string {
		v, _ := new(big.Int).SetString(string(n), 10)
		return web.Dollars(v)
	}
	page := evalJS[[]string](t, b, `[...document.getElementById('reprice-total').cells].map(c => c.textContent).concat([String(document.querySelectorAll('#reprice tbody tr').length)])`)
	wantRep := []string{"total", "20", usd(rep.Total.Old), usd(rep.Total.New), usd(rep.Total.Diff), fmt.Sprint(len(rep.Models) + 1)}
	if got := append(page[:5:5], page[len(page)-1]); fmt.Sprint(got) != fmt.Sprint(wantRep) || rep.Total.Diff == "0" {
		t.Errorf("repricing: the page shows %q, the API %q", page, wantRep)
	}
	if after, _ := apiTotal(t, base, admin, q.Encode()+"&user_id=bob&group_by=model"); after != wantBob {
		t.Errorf("repricing wrote: bob's total %s, was %s", after, wantBob)
	}
	// A table that does not load says why, with its line.
	b.run(t, chromedp.SetValue(chromedp.CSS(`#reprice-table`), "version: x\nmodels:\n  gpt-6-luna:\n    text_in: 1.5\n"),
		chromedp.Click(chromedp.CSS(`#reprice-form button`)))
	b.waitJS(t, "the table's error", `document.getElementById('reprice-state').classList.contains('error') && /line \d/.test(document.getElementById('reprice-state').textContent)`)

	// A zone's days: the page's totals are the API's in that zone.
	b.run(t, chromedp.Navigate(base+"/admin?tz=Asia/Kolkata&mode=sideband"))
	kq := url.Values{"from": {from}, "to": {to}, "tz": {"Asia/Kolkata"}, "mode": {"sideband"}}
	wantK, daysK := apiTotal(t, base, admin, kq.Encode()+"&group_by=day")
	b.waitJS(t, "the Kolkata totals", `document.getElementById('total-day') && document.getElementById('total-day').textContent === `+jsString(wantK)+
		` && document.querySelectorAll('#sum-day tbody tr').length === `+fmt.Sprint(daysK+1)+
		` && document.querySelectorAll('#records tbody tr').length === 30 && [...document.querySelectorAll('#records tbody tr')].every(r => r.cells[4].textContent === 'sideband')`)
	if daysK < 2 {
		t.Errorf("Kolkata: %d days, want the seeded records' days", daysK)
	}
	b.screenshot(t, "admin.png")
	b.noViolations(t)

	// A plain user's token is refused with the 403 message; an expired one
	// says so.
	b.run(t, chromedp.Navigate(base+"/admin#token="+url.QueryEscape(mint(t, "just-a-user", "", "pro"))))
	b.acceptSwitch(t) // the tab holds the admin's token
	b.waitJS(t, "the 403 message", `document.getElementById('sum-day-state').textContent.includes('admin or finance role') && document.getElementById('records-state').classList.contains('error')`)
	expired, err := auth.Mint(auth.MintParams{Secret: []byte(testSecret), Subject: "finance-lead", Role: "finance", TTL: time.Hour, Now: time.Now().Add(-2 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	b.run(t, chromedp.Navigate(base+"/admin#token="+url.QueryEscape(expired)))
	b.acceptSwitch(t)
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
