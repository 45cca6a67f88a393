package billing_test

import (
	"context"
	"encoding/json"
	"math/big"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/voxgate/voxgate/billing"
)

// sumAmounts adds decimal micro-USD strings with six places exactly.
func sumAmounts(t *testing.T, amounts ...string) *big.Rat {
	t.Helper()
	sum := new(big.Rat)
	for _, a := range amounts {
		r, ok := new(big.Rat).SetString(a)
		if !ok {
			t.Fatalf("amount %q does not parse", a)
		}
		sum.Add(sum, r)
	}
	return sum
}

// A record's cost lines, each class × its price, plus the one rounding
// add up exactly to its cost; a duration-priced transcription included.
func TestDetailLinesAddUpToTheCost(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	ctx := context.Background()
	recs := []billing.Record{voiceRecord("vs_d1"), voiceRecord("vs_d2")}
	recs[1].TranscriptionModel = "whisper-1"
	recs[1].Transcription = billing.Usage{AudioMillis: 12_345}
	for _, r := range recs {
		w, err := fx.ledger.Write(ctx, fx.pool, r)
		if err != nil {
			t.Fatal(err)
		}
		rec := get(t, fx.ledger.HandleDetail, "/v1/admin/sessions/"+strconv.FormatInt(w.ID, 10), "id", strconv.FormatInt(w.ID, 10))
		if rec.Code != http.StatusOK {
			t.Fatalf("%d %s", rec.Code, rec.Body)
		}
		var d struct {
			CostMicros *int64 `json:"cost_micros"`
			Cost       string
			Lines      []struct {
				Class  string
				Amount string `json:"amount_micros"`
			}
			Rounding   string `json:"rounding_micros"`
			LinesTotal *int64 `json:"lines_total_micros"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &d); err != nil {
			t.Fatal(err)
		}
		if d.CostMicros == nil || d.LinesTotal == nil || *d.LinesTotal != *d.CostMicros || len(d.Lines) < 5 {
			t.Fatalf("detail %s", rec.Body)
		}
		amounts := []string{d.Rounding}
		for _, l := range d.Lines {
			amounts = append(amounts, l.Amount)
		}
		if got := sumAmounts(t, amounts...); got.Cmp(new(big.Rat).SetInt64(*d.CostMicros)) != 0 {
			t.Fatalf("lines add up to %s, cost %d: %s", got.FloatString(6), *d.CostMicros, rec.Body)
		}
		if want := billing.Dollars(*d.CostMicros); d.Cost != want {
			t.Fatalf("cost %q, want %q", d.Cost, want)
		}
	}
}

// An unpriced record says so in the detail, the listing and the CSV:
// never 0. An unknown or foreign id is 404.
func TestDetailOfAnUnpricedRecord(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	ctx := context.Background()
	r := voiceRecord("vs_u")
	r.Model = "no-such-model"
	w, err := fx.ledger.Write(ctx, fx.pool, r)
	if err != nil {
		t.Fatal(err)
	}
	id := strconv.FormatInt(w.ID, 10)
	rec := get(t, fx.ledger.HandleDetail, "/v1/admin/sessions/"+id, "id", id)
	body := rec.Body.String()
	if rec.Code != http.StatusOK || !strings.Contains(body, `"cost":"unpriced"`) || !strings.Contains(body, `"cost_micros":null`) ||
		!strings.Contains(body, `no-such-model`) || !strings.Contains(body, `"lines_total_micros":null`) {
		t.Fatalf("%d %s", rec.Code, body)
	}
	list := get(t, fx.ledger.HandleSessions, "/v1/admin/sessions?from=2020-01-01")
	if !strings.Contains(list.Body.String(), `"cost":"unpriced"`) {
		t.Fatalf("listing %s", list.Body)
	}
	csv := get(t, fx.ledger.HandleCSV, "/v1/admin/costs.csv?from=2020-01-01")
	if !strings.Contains(csv.Body.String(), ",unpriced,true,") {
		t.Fatalf("csv %s", csv.Body)
	}
	for _, bad := range []string{"999999", "abc", "-1", id + "0"} {
		if rec := get(t, fx.ledger.HandleDetail, "/v1/admin/sessions/"+bad, "id", bad); rec.Code != http.StatusNotFound {
			t.Errorf("id %q: %d %s", bad, rec.Code, rec.Body)
		}
	}
}

// mode and model filter the listing, the summary and the CSV alike; a
// voice record takes its session's mode.
func TestFiltersModeAndModel(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	ctx := context.Background()
	if _, err := fx.pool.Exec(ctx, `INSERT INTO voice_sessions (id, user_id, mode, plan, provider, model, voice, max_duration_s, expires_at)
		VALUES ('vs_side', 'alice', 'sideband', 'free', 'openai', 'gpt-realtime', 'alloy', 60, now() + interval '1 minute')`); err != nil {
		t.Fatal(err)
	}
	side, err := fx.ledger.Write(ctx, fx.pool, voiceRecord("vs_side"))
	if err != nil {
		t.Fatal(err)
	}
	if side.Mode != "sideband" {
		t.Fatalf("mode %q", side.Mode)
	}
	other := voiceRecord("vs_other")
	other.Model = "gpt-realtime-mini"
	if _, err := fx.ledger.Write(ctx, fx.pool, other); err != nil {
		t.Fatal(err)
	}
	from := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	for _, q := range []string{"mode=sideband", "model=gpt-realtime-2025-08-28"} {
		list := get(t, fx.ledger.HandleSessions, "/v1/admin/sessions?from="+from+"&"+q)
		var l struct{ Items []billing.Record }
		if err := json.Unmarshal(list.Body.Bytes(), &l); err != nil || len(l.Items) != 1 || l.Items[0].SessionID != "vs_side" {
			t.Fatalf("%s: %s", q, list.Body)
		}
		sum := get(t, fx.ledger.HandleSummary, "/v1/admin/costs/summary?group_by=mode&from="+from+"&"+q)
		if !strings.Contains(sum.Body.String(), `"key":"sideband","records":1,`) || strings.Contains(sum.Body.String(), `"key":""`) {
			t.Fatalf("%s: %s", q, sum.Body)
		}
		csv := get(t, fx.ledger.HandleCSV, "/v1/admin/costs.csv?from="+from+"&"+q)
		if n := strings.Count(csv.Body.String(), "\r\n"); n != 2 || !strings.Contains(csv.Body.String(), "vs_side") {
			t.Fatalf("%s: %d lines: %s", q, n, csv.Body)
		}
	}
	if rec := get(t, fx.ledger.HandleSessions, "/v1/admin/sessions?mode=live"); rec.Code != http.StatusBadRequest {
		t.Fatalf("mode=live: %d", rec.Code)
	}
}
