package chat_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/voxgate/voxgate/internal/pgtest"
	"github.com/voxgate/voxgate/internal/spool"
	"github.com/voxgate/voxgate/internal/testgraph"
	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/sim"
)

// A turn whose end meets a database that is down keeps its usage record
// and its settlement on the durable path: once the database is back the
// record is there exactly once (a replay after a crash adds nothing) and
// the concurrency lease is freed at once, not at its 60 s TTL. Its
// messages are not stored: the client was told the turn failed.
func TestTurnEndSurvivesADatabaseOutage(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		// leave: the database goes while the model streams and the client
		// then leaves (the turn is cut); otherwise while the model call is
		// held, which then answers.
		leave      bool
		wantSource string
	}{
		{name: "answered", wantSource: "provider_reported"},
		{name: "client left mid-stream", leave: true, wantSource: "server_observed"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dbURL := pgtest.URL(t)
			proxy := pgtest.NewProxy(t, dbURL)
			direct := pgtest.NewPool(t, dbURL, 2)
			dir := t.TempDir()
			sp, err := spool.New(spool.Params{Dir: dir, RetryFor: 300 * time.Millisecond, Attempt: 500 * time.Millisecond, Logger: quiet()})
			if err != nil {
				t.Fatal(err)
			}
			gp := &testgraph.Gated{Entered: make(chan struct{}, 1), Gate: make(chan struct{})}
			// A stream that stalls after its third chunk, for the client to
			// leave in the middle of.
			simCfg := sim.Config{Latency: &sim.Latency{}, Script: script(), Faults: []sim.Fault{
				{Endpoint: "/v1/chat/completions", Kind: sim.FaultTimeout, AfterChunks: 3}}}
			o := options{dbURL: proxy.URL, spool: sp, simCfg: &simCfg}
			if !tc.leave {
				o.simCfg = nil
				o.provider = func(p llm.Provider) llm.Provider {
					gp.Provider = p
					return gp
				}
			}
			f := newFixture(t, o)
			count := func(sql string) int {
				var n int
				if err := direct.QueryRow(context.Background(), sql).Scan(&n); err != nil {
					t.Fatal(err)
				}
				return n
			}

			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.leave {
				resp := f.do(t, ctx, call{user: "u1", body: map[string]any{"message": "tell me a story"}})
				readUntilContent(t, resp)
				proxy.Cut()
				cancel()
				resp.Body.Close()
			} else {
				replies := make(chan reply, 1)
				go func() {
					resp := f.do(t, ctx, call{user: "u1", body: map[string]any{"message": "hello"}})
					defer resp.Body.Close()
					replies <- readReply(t, resp)
				}()
				<-gp.Entered
				proxy.Cut()
				close(gp.Gate)
				r := <-replies
				if last := r.last(); last.Type != "error" || last.Data["code"] != "UNAVAILABLE" {
					t.Errorf("the turn's last event: got %s %v, want error UNAVAILABLE", last.Type, last.Data)
				}
			}
			waitFor(t, "the turn's end to be spooled", func() bool { n, _ := sp.Pending(); return n == 1 })
			if n := count(`SELECT count(*) FROM usage_records`); n != 0 {
				t.Fatalf("records while the database was down: got %d, want 0", n)
			}
			files, _ := filepath.Glob(filepath.Join(dir, "*"))
			if len(files) != 1 {
				t.Fatalf("spool files: got %v, want 1", files)
			}
			spooled, err := os.ReadFile(files[0])
			if err != nil {
				t.Fatal(err)
			}

			proxy.Restore()
			back := time.Now()
			runCtx, stopRun := context.WithCancel(context.Background())
			ran := make(chan struct{})
			go func() { sp.Run(runCtx); close(ran) }()
			stop := sync.OnceFunc(func() { stopRun(); <-ran })
			defer stop()
			waitFor(t, "the lease to be freed", func() bool { return count(`SELECT count(*) FROM quota_tickets`) == 0 })
			if took := time.Since(back); took > 3*time.Second {
				t.Errorf("lease freed %s after the database came back, want within 3s", took)
			}
			var source string
			var cost *int64
			if err := direct.QueryRow(context.Background(), `SELECT usage_source, cost_micros FROM usage_records`).Scan(&source, &cost); err != nil {
				t.Fatalf("the turn's record after the outage: %v", err)
			}
			if source != tc.wantSource || cost == nil || *cost <= 0 {
				t.Errorf("record: got source %s, cost %v; want %s with a cost", source, cost, tc.wantSource)
			}
			var tokens int64
			if err := direct.QueryRow(context.Background(), `SELECT day_tokens FROM quota_users WHERE user_id = 'u1'`).Scan(&tokens); err != nil {
				t.Fatal(err)
			}
			if tokens == 0 {
				t.Error("the day's tokens after the settlement: got 0, want the turn's")
			}
			waitFor(t, "the spool to empty", func() bool { n, _ := sp.Pending(); return n == 0 })

			// A crash between the commit and the file's removal: the file is
			// back, and completing it again changes nothing. Run is stopped
			// first, so the replay is this Drain's and not Run's.
			stop()
			if err := os.WriteFile(files[0], spooled, 0o600); err != nil {
				t.Fatal(err)
			}
			if n, err := sp.Drain(context.Background()); n != 1 || err != nil {
				t.Fatalf("Drain of the replayed file: got %d, %v; want 1, nil", n, err)
			}
			if n := count(`SELECT count(*) FROM usage_records`); n != 1 {
				t.Errorf("records after the replay: got %d, want 1", n)
			}
			var again int64
			if err := direct.QueryRow(context.Background(), `SELECT day_tokens FROM quota_users WHERE user_id = 'u1'`).Scan(&again); err != nil {
				t.Fatal(err)
			}
			if again != tokens {
				t.Errorf("the day's tokens after the replay: got %d, want %d", again, tokens)
			}
			// The messages are never spooled: replayed after the outage they
			// could land after a later turn's, so the turn failed instead.
			if n := count(`SELECT count(*) FROM chat_messages`); n != 0 {
				t.Errorf("messages of a turn that failed: got %d, want 0", n)
			}
		})
	}
}
