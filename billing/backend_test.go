package billing_test

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/voxgate/voxgate/billing"
)

// liveRecord is a live session's record: 61.234 s of voice, and a backend
// on gpt-6-luna with cached input and cache writes.
func liveRecord(session string) billing.Record {
	return billing.Record{
		UserID: "alice", SessionID: session, Kind: billing.KindVoice, Provider: "openai", Model: "gpt-live-1.1",
		Usage: billing.Usage{AudioMillis: 61_234}, DurationMS: 61_234, UsageSource: billing.SourceUnconfirmed,
		BackendModel: "gpt-6-luna", Backend: billing.Usage{TextIn: 5000, TextCachedIn: 2000, TextCacheWriteIn: 1000, TextOut: 700},
	}
}

// A live session's backend tokens are a cost class of their own: priced
// with the backend model's prices, cached input and cache writes included,
// once with the voice time; listed as the detail's backend lines; shown in
// the CSV's and the JSONL's own columns and counted in the summary's
// tokens; the unconfirmed source is shown as it is.
func TestLiveBackendIsItsOwnClass(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	ctx := context.Background()
	w, err := fx.ledger.Write(ctx, fx.pool, liveRecord("vs_live1"))
	if err != nil {
		t.Fatal(err)
	}
	// By hand: 61,234 ms × 50,000 ÷ 60,000 = 51,028.33…; luna: 2,000 plain
	// in × 0.1 + 2,000 cached × 0.01 + 1,000 written × 0.125 + 700 out ×
	// 0.5 = 695; 51,723.33… rounds to 51,723.
	if w.CostMicros == nil || *w.CostMicros != 51_723 {
		t.Fatalf("cost %v, want 51723", show(w.CostMicros))
	}
	id := strconv.FormatInt(w.ID, 10)
	rec := get(t, fx.ledger.HandleDetail, "/v1/admin/sessions/"+id, "id", id)
	var d struct {
		BackendModel string `json:"backend_model"`
		UsageSource  string `json:"usage_source"`
		Tokens       billing.TokenView
		Lines        []billing.CostLine
		Rounding     string `json:"rounding_micros"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &d); err != nil {
		t.Fatal(err)
	}
	var backend []string
	amounts := []string{d.Rounding}
	for _, l := range d.Lines {
		amounts = append(amounts, l.Amount)
		if l.Part == "backend" && l.Model == "gpt-6-luna" {
			backend = append(backend, l.Class+"="+strconv.FormatInt(l.Tokens, 10))
		}
	}
	slices.Sort(backend)
	if want := []string{"text_cache_write_in=1000", "text_cached_in=2000", "text_in=2000", "text_out=700"}; !slices.Equal(backend, want) ||
		d.BackendModel != "gpt-6-luna" || d.UsageSource != "unconfirmed" || d.Tokens.BackendTextCachedIn != 2000 {
		t.Fatalf("detail backend lines %v (want %v): %s", backend, want, rec.Body)
	}
	if got := sumAmounts(t, amounts...); got.Cmp(sumAmounts(t, "51723")) != 0 {
		t.Fatalf("lines add up to %s: %s", got.FloatString(6), rec.Body)
	}

	c := get(t, fx.ledger.HandleCSV, "/v1/admin/costs.csv")
	rows, err := csv.NewReader(strings.NewReader(c.Body.String())).ReadAll()
	if err != nil || len(rows) != 2 {
		t.Fatalf("csv %v: %s", err, c.Body)
	}
	col := map[string]string{}
	for i, h := range rows[0] {
		col[h] = rows[1][i]
	}
	if col["backend_model"] != "gpt-6-luna" || col["backend_text_in"] != "5000" || col["backend_text_cached_in"] != "2000" ||
		col["backend_text_cache_write_in"] != "1000" || col["backend_text_out"] != "700" || col["usage_source"] != "unconfirmed" ||
		col["transcription_text_in"] != "0" || col["cost_micros"] != "51723" || col["audio_ms"] != "61234" {
		t.Fatalf("csv row %v", col)
	}

	j := get(t, fx.ledger.HandleJSONL, "/v1/admin/costs.jsonl")
	var line billing.Record
	if err := json.Unmarshal([]byte(strings.SplitN(j.Body.String(), "\n", 2)[0]), &line); err != nil {
		t.Fatal(err)
	}
	if line.BackendModel != "gpt-6-luna" || line.Tokens.BackendTextIn != 5000 || line.Tokens.BackendTextCacheWriteIn != 1000 ||
		line.UsageSource != "unconfirmed" {
		t.Fatalf("jsonl line %s", j.Body)
	}

	s := get(t, fx.ledger.HandleSummary, "/v1/admin/costs/summary")
	var sum struct {
		Total struct {
			TokensIn  json.Number `json:"tokens_in"`
			TokensOut json.Number `json:"tokens_out"`
		}
	}
	if err := json.Unmarshal(s.Body.Bytes(), &sum); err != nil || sum.Total.TokensIn != "5000" || sum.Total.TokensOut != "700" {
		t.Fatalf("summary %s (%v)", s.Body, err)
	}
}

// Backend tokens need their model, and a backend bills text only.
func TestBackendUsageIsChecked(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	noModel := liveRecord("vs_live2")
	noModel.BackendModel = ""
	audio := liveRecord("vs_live3")
	audio.Backend.AudioIn = 10
	over := liveRecord("vs_live4")
	over.Backend.TextCachedIn = 4500 // with the 1,000 written, more than the 5,000 in
	for _, r := range []billing.Record{noModel, audio, over} {
		if _, err := fx.ledger.Write(context.Background(), fx.pool, r); err == nil {
			t.Fatalf("wrote %+v", r.Backend)
		}
	}
}

// TestTokenCountMatchesTheDatabase: Record.TokenCount, what a user's day is
// charged, and the database's usage_record_tokens_in and _out, what the
// rollups sum, count a record with every token class the same.
func TestTokenCountMatchesTheDatabase(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	ctx := context.Background()
	r := liveRecord("vs_count")
	r.Usage.TextIn, r.Usage.TextOut, r.Usage.AudioIn, r.Usage.AudioOut, r.Usage.ImageIn = 11, 13, 17, 19, 23
	r.TranscriptionModel = "gpt-4o-mini-transcribe"
	r.Transcription = billing.Usage{TextIn: 29, AudioIn: 31, TextOut: 37}
	w, err := fx.ledger.Write(ctx, fx.pool, r)
	if err != nil {
		t.Fatal(err)
	}
	in, out := w.TokenCount()
	var dbIn, dbOut int64
	if err := fx.pool.QueryRow(ctx, `SELECT usage_record_tokens_in(r), usage_record_tokens_out(r) FROM usage_records r WHERE id = $1`,
		w.ID).Scan(&dbIn, &dbOut); err != nil {
		t.Fatal(err)
	}
	if in != dbIn || out != dbOut || in != 11+17+23+29+31+5000 || out != 13+19+37+700 {
		t.Errorf("Count %d in, %d out; the database %d in, %d out", in, out, dbIn, dbOut)
	}
}
