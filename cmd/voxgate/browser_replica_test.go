package main

import (
	"context"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/internal/pgha"
)

// /admin shows how current its figures are beside them: with finance on a
// standby whose replay is paused, the line says the data was read from the
// standby and is at least as far behind as the pause is old.
func TestAdminShowsTheReplicaLagInChromium(t *testing.T) {
	if !inLoopbackNamespace(t) {
		return
	}
	pair := pgha.Start(t, pgha.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := pair.WaitStreaming(ctx); err != nil {
		t.Fatal(err)
	}
	m, _ := startMain(t, pgha.DirectURL(pair.Primary), func(c *config.Config) {
		c.Database.ReadURL = pgha.DirectURL(pair.Standby)
	})
	if err := pair.WaitReplayed(ctx); err != nil {
		t.Fatal(err)
	}
	if err := pair.PauseReplay(ctx); err != nil {
		t.Fatal(err)
	}
	// A commit on the primary the standby will not replay: from it on the
	// standby's as_of stands still while its lag grows.
	if _, err := m.Pool.Exec(ctx, `INSERT INTO user_plans (user_id, plan) VALUES ('lag-marker', 'free')`); err != nil {
		t.Fatal(err)
	}
	paused := time.Now()
	if err := pair.WaitReceived(ctx); err != nil {
		t.Fatal(err)
	}
	b := newBrowser(t)
	opened := time.Now()
	b.run(t, chromedp.Navigate(m.URL()+"/admin?tz=UTC#token="+url.QueryEscape(mint(t, "finance-lead", "finance", ""))))
	b.waitJS(t, "the freshness line", `document.getElementById('freshness').dataset.readFrom === 'standby' && !!document.getElementById('total-day')`)
	text := evalJS[string](t, b, `document.getElementById('freshness').textContent`)
	if !strings.Contains(text, "read from the standby") || !strings.Contains(text, "s behind the primary") {
		t.Fatalf("the freshness line: %q", text)
	}
	asOf, err := time.Parse(time.RFC3339Nano, evalJS[string](t, b, `document.getElementById('freshness').dataset.asOf`))
	if err != nil || !asOf.Before(paused) {
		t.Fatalf("the page's as_of: %s (%v), want before the unreplayed commit (%s)", asOf, err, paused)
	}
	// Read after the page opened, from a standby stopped before the
	// pause: at least that far behind.
	lag, err := strconv.ParseInt(evalJS[string](t, b, `document.getElementById('freshness').dataset.lagMs`), 10, 64)
	if want := opened.Sub(paused).Milliseconds(); err != nil || lag < want {
		t.Fatalf("the page's lag: %d ms (%v), want at least %d", lag, err, want)
	}
	b.noViolations(t)
}
