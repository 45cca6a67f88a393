package billing_test

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/voxgate/voxgate/billing"
)

// The CSV and JSONL exports carry a manifest (headers, the JSONL's last
// line, the manifest route) equal to the summary's total for the same
// filter, and hold exactly that many rows with that total.
func TestExportManifestsMatchTheSummary(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	seed(t, fx.pool, 700, "alice", "bob")
	for _, q := range []string{"from=2026-10-02&to=2026-10-20&tz=Asia/Kolkata", "from=2026-10-01&to=2026-11-01&user_id=bob&kind=voice"} {
		var sum struct {
			Total struct {
				Records, Unpriced int64
				CostMicros        json.Number `json:"cost_micros"`
			}
		}
		s := get(t, fx.ledger.HandleSummary, "/v1/admin/costs/summary?"+q)
		if err := json.Unmarshal(s.Body.Bytes(), &sum); err != nil || sum.Total.Records == 0 || sum.Total.Unpriced == 0 {
			t.Fatalf("summary %s %v", s.Body, err)
		}
		want := [3]string{strconv.FormatInt(sum.Total.Records, 10), strconv.FormatInt(sum.Total.Unpriced, 10), sum.Total.CostMicros.String()}

		var m struct {
			Rows, Unpriced int64
			CostMicros     json.Number `json:"cost_micros"`
		}
		mr := get(t, fx.ledger.HandleManifest, "/v1/admin/costs/manifest?"+q)
		if err := json.Unmarshal(mr.Body.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		if got := [3]string{strconv.FormatInt(m.Rows, 10), strconv.FormatInt(m.Unpriced, 10), m.CostMicros.String()}; got != want {
			t.Fatalf("%s: manifest %v, summary %v", q, got, want)
		}

		for _, h := range []struct {
			name string
			h    func(http.ResponseWriter, *http.Request) error
		}{{"csv", fx.ledger.HandleCSV}, {"jsonl", fx.ledger.HandleJSONL}} {
			rec := get(t, h.h, "/v1/admin/costs."+h.name+"?"+q)
			if rec.Code != http.StatusOK {
				t.Fatalf("%s: %d %s", h.name, rec.Code, rec.Body)
			}
			hdr := [3]string{rec.Header().Get("X-Voxgate-Rows"), rec.Header().Get("X-Voxgate-Unpriced"), rec.Header().Get("X-Voxgate-Cost-Micros")}
			if hdr != want {
				t.Fatalf("%s headers %v, summary %v", h.name, hdr, want)
			}
			var rows, unpriced, cost int64
			add := func(c *int64) {
				if c == nil {
					unpriced++
				} else {
					cost += *c
				}
				rows++
			}
			if h.name == "csv" {
				all, err := csv.NewReader(strings.NewReader(rec.Body.String())).ReadAll()
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range all[1:] {
					if r[23] == "unpriced" {
						add(nil)
						continue
					}
					c, err := strconv.ParseInt(r[23], 10, 64)
					if err != nil {
						t.Fatalf("cost cell %q", r[23])
					}
					add(&c)
				}
			} else {
				sc := bufio.NewScanner(strings.NewReader(rec.Body.String()))
				var last string
				for sc.Scan() {
					if last != "" {
						var r billing.Record
						if err := json.Unmarshal([]byte(last), &r); err != nil || r.ID == 0 {
							t.Fatalf("line %q: %v", last, err)
						}
						add(r.CostMicros)
					}
					last = sc.Text()
				}
				var trailer struct {
					Manifest struct {
						Rows, Unpriced int64
						CostMicros     json.Number `json:"cost_micros"`
					}
				}
				if err := json.Unmarshal([]byte(last), &trailer); err != nil {
					t.Fatal(err)
				}
				tm := trailer.Manifest
				if got := [3]string{strconv.FormatInt(tm.Rows, 10), strconv.FormatInt(tm.Unpriced, 10), tm.CostMicros.String()}; got != want {
					t.Fatalf("jsonl trailer %v, summary %v", got, want)
				}
			}
			if got := [3]string{strconv.FormatInt(rows, 10), strconv.FormatInt(unpriced, 10), strconv.FormatInt(cost, 10)}; got != want {
				t.Fatalf("%s %s: rows hold %v, summary %v", h.name, q, got, want)
			}
		}
	}
}
