package billing_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/voxgate/voxgate/billing"
	"github.com/voxgate/voxgate/internal/database"
	"github.com/voxgate/voxgate/internal/page"
	"github.com/voxgate/voxgate/internal/pgha"
	"github.com/voxgate/voxgate/internal/pgtest"
)

// replicaSummary is what the test reads of a summary's JSON: the fields
// by their wire names, so a renamed field fails here.
type replicaSummary struct {
	AsOf     string `json:"as_of"`
	LagMS    int64  `json:"lag_ms"`
	ReadFrom string `json:"read_from"`
	Total    struct {
		Records int64 `json:"records"`
	} `json:"total"`
}

// Finance on a replica (docs/billing.md): a Finance on a streaming
// standby answers from the standby's data with the position it is
// complete up to. With replay paused, a record committed on the primary
// is absent from every finance answer and as_of is older than it, while
// the ledger's own reads (the primary) have it; once replay resumes the
// replica catches up.
func TestFinanceReadsTheReplica(t *testing.T) {
	pair := pgha.Start(t, pgha.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := pair.WaitStreaming(ctx); err != nil {
		t.Fatal(err)
	}
	primary := pgtest.NewPool(t, pgha.DirectURL(pair.Primary), 4)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	if _, err := database.Migrate(ctx, primary, database.Core, quiet); err != nil {
		t.Fatal(err)
	}
	prices, err := billing.DefaultPrices()
	if err != nil {
		t.Fatal(err)
	}
	ledger, err := billing.NewLedger(billing.LedgerParams{Pool: primary, Prices: prices, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	read, err := database.OpenRead(ctx, pgha.DirectURL(pair.Standby), 2)
	if err != nil {
		t.Fatal(err)
	}
	defer read.Close()
	fin := billing.NewFinance(ledger, read)

	var last billing.Record
	for i := range 3 {
		if last, err = ledger.Write(ctx, primary, completion("alice", i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := pair.WaitReplayed(ctx); err != nil {
		t.Fatal(err)
	}
	day := last.CreatedAt.UTC().Truncate(24 * time.Hour)
	window := "from=" + day.Format("2006-01-02") + "&to=" + day.Add(24*time.Hour).Format("2006-01-02")
	viaFinance := func() replicaSummary {
		rec := get(t, fin.HandleSummary, "/v1/admin/costs/summary?group_by=user&"+window)
		if rec.Code != 200 {
			t.Fatalf("summary: %d %s", rec.Code, rec.Body)
		}
		var s replicaSummary
		if err := json.Unmarshal(rec.Body.Bytes(), &s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	asOf := func(s replicaSummary) time.Time {
		at, err := time.Parse(time.RFC3339Nano, s.AsOf)
		if err != nil {
			t.Fatalf("as_of %q is not RFC 3339: %v", s.AsOf, err)
		}
		return at
	}

	s := viaFinance()
	if s.ReadFrom != billing.ReadFromStandby || s.Total.Records != 3 {
		t.Fatalf("caught up: read from %q, %d records; want standby, 3", s.ReadFrom, s.Total.Records)
	}
	if asOf(s).Before(last.CreatedAt) {
		t.Fatalf("caught up: as_of %s is before the last replayed record (%s)", s.AsOf, last.CreatedAt)
	}

	if err := pair.PauseReplay(ctx); err != nil {
		t.Fatal(err)
	}
	late, err := ledger.Write(ctx, primary, completion("alice", 3))
	if err != nil {
		t.Fatal(err)
	}
	if err := pair.WaitReceived(ctx); err != nil {
		t.Fatal(err)
	}
	s = viaFinance()
	if s.Total.Records != 3 {
		t.Fatalf("paused: the replica's summary has %d records, want 3 (the late one not replayed)", s.Total.Records)
	}
	if !asOf(s).Before(late.CreatedAt) {
		t.Fatalf("paused: as_of %s, want before the unreplayed record's %s", s.AsOf, late.CreatedAt)
	}
	if behind := time.Since(late.CreatedAt).Milliseconds(); s.LagMS < behind {
		t.Fatalf("paused: lag_ms %d, want at least the %d ms since the unreplayed record", s.LagMS, behind)
	}
	// Every finance read goes to the replica: the listing, the export and
	// its manifest, the record's detail.
	f := billing.Filter{From: day, To: day.Add(24 * time.Hour), TZ: time.UTC}
	list, err := fin.Records(ctx, f, page.Request{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 3 || list.ReadFrom != billing.ReadFromStandby || list.AsOf.After(late.CreatedAt) {
		t.Fatalf("paused: listing has %d records from %q as of %s; want 3 from the standby before %s", len(list.Items), list.ReadFrom, list.AsOf, late.CreatedAt)
	}
	csv := get(t, fin.HandleCSV, "/v1/admin/costs.csv?"+window)
	if got := strings.Count(csv.Body.String(), "\r\n") - 1; got != 3 || csv.Header().Get("X-Voxgate-Rows") != "3" {
		t.Fatalf("paused: the export has %d rows (X-Voxgate-Rows %q), want 3", got, csv.Header().Get("X-Voxgate-Rows"))
	}
	if got := csv.Header().Get("X-Voxgate-Read-From"); got != billing.ReadFromStandby {
		t.Fatalf("paused: the export's X-Voxgate-Read-From: got %q, want standby", got)
	}
	if at, err := time.Parse(time.RFC3339Nano, csv.Header().Get("X-Voxgate-As-Of")); err != nil || !at.Before(late.CreatedAt) {
		t.Fatalf("paused: the export's X-Voxgate-As-Of %q, want before %s", csv.Header().Get("X-Voxgate-As-Of"), late.CreatedAt)
	}
	id := strconv.FormatInt(late.ID, 10)
	if rec := get(t, fin.HandleDetail, "/v1/admin/sessions/"+id, "id", id); rec.Code != 404 {
		t.Fatalf("paused: the unreplayed record's detail on the replica: got %d, want 404", rec.Code)
	}
	// The ledger's own reads are the primary's, exact now.
	if p, err := ledger.Summarize(ctx, f, "user"); err != nil || p.Total.Records != 4 || p.ReadFrom != billing.ReadFromPrimary {
		t.Fatalf("the primary's summary: %d records from %q (%v), want 4 from the primary", p.Total.Records, p.ReadFrom, err)
	}

	if err := pair.ResumeReplay(ctx); err != nil {
		t.Fatal(err)
	}
	if err := pair.WaitReplayed(ctx); err != nil {
		t.Fatal(err)
	}
	s = viaFinance()
	if s.Total.Records != 4 || asOf(s).Before(late.CreatedAt) {
		t.Fatalf("resumed: %d records as of %s, want 4 as of %s or later", s.Total.Records, s.AsOf, late.CreatedAt)
	}
}
