package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/internal/pgha"
	"github.com/voxgate/voxgate/internal/pgtest"
	"github.com/voxgate/voxgate/internal/testkit"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// Finance on a replica, through the gateway (docs/operations.md): with
// VOXGATE_DATABASE_URL on the primary and database.read_url on a standby
// whose replay is paused, requests are admitted, counted against the
// limit and recorded on the primary, exactly, while the finance routes
// show the standby's older data with an as_of before those requests.
//
// Admission on the read pool would fail this test either way: its
// check-and-increment would be refused (the read pool is read only, the
// standby too), and a count read there would miss the paused requests
// and admit past the limit.
func TestFinanceOnAReplicaAdmissionOnThePrimary(t *testing.T) {
	pair := pgha.Start(t, pgha.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := pair.WaitStreaming(ctx); err != nil {
		t.Fatal(err)
	}
	_, ts := simtest.NewServer(t, sim.Config{Latency: simtest.ZeroLatency()})
	const perDay = 2
	m, _ := startMain(t, pgha.DirectURL(pair.Primary), func(c *config.Config) {
		c.Secrets.OpenAIAPIKey, c.Secrets.OpenAIBaseURL = simtest.TestKey, ts.URL+"/v1"
		c.Quota.Plans["two"] = config.Plan{RequestsPerDay: perDay, MaxSessionSeconds: 600, VoiceSessions: 1}
		c.Database.ReadURL = pgha.DirectURL(pair.Standby)
	})
	if m.ReadPool == nil {
		t.Fatal("database.read_url is set and the gateway has no read pool")
	}
	base, admin := m.URL(), mint(t, "fin-admin", "admin", "")
	model := firstModel(t, base, mint(t, "probe", "", "two"))
	if err := pair.WaitReplayed(ctx); err != nil { // the schema, on the standby too
		t.Fatal(err)
	}
	// The finance routes stay admin and finance only.
	summaryURL := base + "/v1/admin/costs/summary?group_by=user&user_id=reader"
	if code, _, _ := call(t, "GET", summaryURL, mint(t, "reader", "", "two"), nil); code != http.StatusForbidden {
		t.Fatalf("a user's summary: got %d, want 403", code)
	}

	if err := pair.PauseReplay(ctx); err != nil {
		t.Fatal(err)
	}
	paused := time.Now()
	tok := mint(t, "reader", "", "two")
	body := fmt.Sprintf(`{"model":%q,"messages":[{"role":"user","content":"hello"}]}`, model)
	for i := range perDay + 1 {
		code, _, out := call(t, "POST", base+"/v1/chat/completions", tok, strings.NewReader(body))
		want := http.StatusOK
		if i == perDay {
			want = http.StatusTooManyRequests // the limit, counted on the primary
		}
		if code != want {
			t.Fatalf("completion %d with replay paused: got %d %s, want %d", i+1, code, out, want)
		}
	}
	// The records are on the primary, whatever the standby shows.
	testkit.Eventually(t, ctx, "both completions' records on the primary", func() bool {
		var n int
		err := m.Pool.QueryRow(ctx, `SELECT count(*) FROM usage_records WHERE user_id = 'reader'`).Scan(&n)
		return err == nil && n == perDay
	})

	summary := func() (records int64, asOf time.Time, readFrom string) {
		t.Helper()
		code, _, out := call(t, "GET", summaryURL, admin, nil)
		if code != http.StatusOK {
			t.Fatalf("summary: %d %s", code, out)
		}
		var s struct {
			AsOf     time.Time `json:"as_of"`
			ReadFrom string    `json:"read_from"`
			Total    struct {
				Records int64 `json:"records"`
			} `json:"total"`
		}
		if err := json.Unmarshal([]byte(out), &s); err != nil {
			t.Fatal(err)
		}
		return s.Total.Records, s.AsOf, s.ReadFrom
	}
	if err := pair.WaitReceived(ctx); err != nil {
		t.Fatal(err)
	}
	n, asOf, from := summary()
	if n != 0 || from != "standby" {
		t.Fatalf("paused: the summary has %d of reader's records read from %q, want 0 from the standby", n, from)
	}
	if !asOf.Before(paused) {
		t.Fatalf("paused: as_of %s, want before the requests (from %s)", asOf, paused)
	}

	if err := pair.ResumeReplay(ctx); err != nil {
		t.Fatal(err)
	}
	if err := pair.WaitReplayed(ctx); err != nil {
		t.Fatal(err)
	}
	if n, asOf, _ = summary(); n != perDay || asOf.Before(paused) {
		t.Fatalf("resumed: %d records as of %s, want %d as of after %s", n, asOf, perDay, paused)
	}
}

// A read server that is down does not stop the gateway: it starts with a
// warning, serves its users (admission never needs the read server), and
// the finance routes answer 503 with Retry-After until the server is back.
func TestFinanceReadServerDownAtStart(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gone := ln.Addr().String()
	ln.Close() // nothing listens there now: connections are refused
	m, logs := startMain(t, pgtest.URL(t), func(c *config.Config) {
		c.Database.ReadURL = "postgres://finance@" + gone + "/voxgate?sslmode=disable"
	})
	if !strings.Contains(logs.String(), "database.read_url does not answer yet") {
		t.Fatalf("no startup warning for the read server; log:\n%s", logs)
	}
	if code, _, body := call(t, "GET", m.URL()+"/v1/me", mint(t, "someone", "", ""), nil); code != http.StatusOK {
		t.Fatalf("GET /v1/me with the read server down: %d %s", code, body)
	}
	code, retry, body := call(t, "GET", m.URL()+"/v1/admin/costs/summary", mint(t, "fin", "finance", ""), nil)
	if code != http.StatusServiceUnavailable || errorCode(body) != "UNAVAILABLE" || retry == "" {
		t.Fatalf("the summary with the read server down: %d (Retry-After %q) %s, want 503 UNAVAILABLE", code, retry, body)
	}
}

// voxgate costs export reads where the finance routes do: through
// VOXGATE_DATABASE_READ_URL when it is set (a server that refuses fails
// the export, though the primary answers), and its JSONL manifest says
// where and as of when it read.
func TestCostsExportReadsTheReadURL(t *testing.T) {
	t.Parallel()
	dbURL := pgtest.URL(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gone := ln.Addr().String()
	ln.Close()
	export := func(readURL string) (string, error) {
		env := map[string]string{"VOXGATE_DATABASE_URL": dbURL, "VOXGATE_DATABASE_READ_URL": readURL}
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), []string{"costs", "export", "--from", "2026-01-01", "--to", "2026-01-02", "--format", "jsonl"},
			func(k string) string { return env[k] }, &stdout, &stderr)
		return stdout.String(), err
	}
	if _, err := export("postgres://finance@" + gone + "/voxgate?sslmode=disable&connect_timeout=2"); err == nil {
		t.Fatal("costs export succeeded with its read server down: it did not read there")
	}
	before := time.Now()
	out, err := export(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	var last struct {
		Manifest struct {
			Rows     *int64    `json:"rows"`
			AsOf     time.Time `json:"as_of"`
			ReadFrom string    `json:"read_from"`
		} `json:"manifest"`
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(out)), &last); err != nil || last.Manifest.Rows == nil {
		t.Fatalf("the export's manifest line: %q (%v)", out, err)
	}
	if last.Manifest.ReadFrom != "primary" || last.Manifest.AsOf.Before(before.Add(-time.Second)) {
		t.Fatalf("the manifest: read from %q as of %s, want the primary as of about %s", last.Manifest.ReadFrom, last.Manifest.AsOf, before)
	}
}
