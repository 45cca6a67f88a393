package billing_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/voxgate/voxgate/billing"
	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/httpx"
)

func post(t *testing.T, h httpx.HandlerFunc, target string, body []byte) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	httpx.Handle(h).ServeHTTP(rec, httptest.NewRequest("POST", target, bytes.NewReader(body)))
	return rec
}

type repricing struct {
	NewVersion string `json:"new_version"`
	Models     []struct {
		Model                    string
		Records                  int64
		Old                      int64 `json:"old_cost_micros"`
		New                      int64 `json:"new_cost_micros"`
		Diff                     int64 `json:"difference_micros"`
		OldUnpriced, NewUnpriced int64
	} `json:"models"`
}

// The current table reprices stored records to no difference; a table
// with one price raised reprices each record with the one cost rule, per
// model, and writes nothing.
func TestRepricePreview(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	ctx := context.Background()
	for _, s := range []string{"vs_r1", "vs_r2", "vs_r3"} {
		if _, err := fx.ledger.Write(ctx, fx.pool, voiceRecord(s)); err != nil {
			t.Fatal(err)
		}
	}
	table, err := os.ReadFile("prices.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var same repricing
	rec := post(t, fx.ledger.HandleReprice, "/v1/admin/costs/reprice?from=2020-01-01", table)
	if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &same) != nil || len(same.Models) != 1 {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	if m := same.Models[0]; m.Records != 3 || m.Old == 0 || m.Old != m.New || m.Diff != 0 {
		t.Fatalf("same table: %+v", m)
	}
	// Raise gpt-realtime's text output price and rename the version.
	raised := strings.Replace(string(table), `version: "2026-11-24"`, `version: "raised"`, 1)
	i := strings.Index(raised, "\n  gpt-realtime:\n")
	j := i + strings.Index(raised[i:], "text_out: ")
	k := j + strings.Index(raised[j:], "\n")
	raised = raised[:j] + "text_out: 99000000" + raised[k:]
	newPrices, err := billing.LoadPrices([]byte(raised))
	if err != nil {
		t.Fatal(err)
	}
	r := voiceRecord("x")
	want, err := newPrices.Cost(billing.Line{Model: r.Model, Usage: r.Usage}, billing.Line{Model: r.TranscriptionModel, Usage: r.Transcription})
	if err != nil {
		t.Fatal(err)
	}
	var up repricing
	rec = post(t, fx.ledger.HandleReprice, "/v1/admin/costs/reprice?from=2020-01-01&kind=voice", []byte(raised))
	if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &up) != nil || len(up.Models) != 1 {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	if m := up.Models[0]; up.NewVersion != "raised" || m.Old != same.Models[0].Old || m.New != 3*want || m.Diff != m.New-m.Old || m.Diff <= 0 {
		t.Fatalf("raised: %+v, want new %d", m, 3*want)
	}
	var stored int64
	if err := fx.pool.QueryRow(ctx, `SELECT count(*) FROM usage_records WHERE price_version = 'raised'`).Scan(&stored); err != nil || stored != 0 {
		t.Fatalf("a preview wrote %d records (%v)", stored, err)
	}
}

// A table that does not load is 422 naming its line; an empty body too.
func TestRepriceRefusesABadTable(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	for body, want := range map[string]string{
		"version: v\nmodels:\n  m:\n    source: s\n    date: \"2026-01-01\"\n    text_in: 1.5\n":                                                               "line 6",
		"version: v\nmodels:\n  a:\n    source: s\n    date: \"2026-01-01\"\n    text_in: 1\n  b:\n    source: s\n    date: \"2026-01-01\"\n    text_in: -1\n": "line 7",
		"version: v\nmodels:\n  m: [\n": "line",
		"":                              "price table",
	} {
		rec := post(t, fx.ledger.HandleReprice, "/v1/admin/costs/reprice", []byte(body))
		if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(rec.Body.String(), "VALIDATION_ERROR") || !strings.Contains(rec.Body.String(), want) {
			t.Errorf("%q: %d %s", body, rec.Code, rec.Body)
		}
	}
}

// FuzzParsePriceTable: a posted table is untrusted; it loads or is a 422,
// never a panic or another error.
func FuzzParsePriceTable(f *testing.F) {
	if table, err := os.ReadFile("prices.yaml"); err == nil {
		f.Add(table)
	}
	f.Add([]byte(`{"version":"v","models":{"m":{"source":"s","date":"2026-01-01","text_in":1}}}`))
	f.Add([]byte("a: &a [*a, *a]\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		p, err := billing.ParsePriceTable(body)
		if err == nil {
			if p.Version == "" || len(p.Models()) == 0 {
				t.Fatalf("loaded a table with no version or models")
			}
			return
		}
		if code := apierr.CodeOf(err); code != apierr.Validation {
			t.Fatalf("code %s for %v", code, err)
		}
	})
}
