package completions_test

import (
	"context"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/voxgate/voxgate/internal/pgtest"
	"github.com/voxgate/voxgate/internal/spool"
	"github.com/voxgate/voxgate/internal/testgraph"
	"github.com/voxgate/voxgate/internal/testkit"
	"github.com/voxgate/voxgate/llm"
)

// outage is a completions fixture whose database goes through a proxy
// and whose provider holds each call at its start (gp), so that a test
// can take the database away between admission and the answer's end.
type outage struct {
	*complFixture
	proxy  *pgtest.Proxy
	direct *pgxpool.Pool // the database, not through the proxy
	sp     *spool.Spool
	dir    string // the spool's
	gp     *testgraph.Gated
}

// newOutage builds one; dbURL edits the proxy's URL the gateway uses.
func newOutage(t *testing.T, params spool.Params, dbURL func(string) string) *outage {
	t.Helper()
	url := pgtest.URL(t)
	o := &outage{proxy: pgtest.NewProxy(t, url), direct: pgtest.NewPool(t, url, 2), dir: t.TempDir(),
		gp: &testgraph.Gated{Entered: make(chan struct{}, 1), Gate: make(chan struct{})}}
	params.Dir, params.Logger = o.dir, testkit.Quiet()
	var err error
	if o.sp, err = spool.New(params); err != nil {
		t.Fatal(err)
	}
	o.complFixture = newComplFixture(t, func(opt *options) {
		opt.dbURL, opt.spool = dbURL(o.proxy.URL), o.sp
		router := opt.provider
		opt.provider = func(p llm.Provider) llm.Provider {
			o.gp.Provider = router(p)
			return gatedRoutes{o.gp}
		}
	})
	return o
}

// breakSpool leaves the spool unable to write a job, as on a full or
// read-only disk: a file stands where its directory was. (A process
// running as root ignores a directory's mode bits, so chmod would not.)
func (o *outage) breakSpool(t *testing.T) {
	t.Helper()
	if err := os.RemoveAll(o.dir); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(o.dir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
}

// answer is what a client got.
type answer struct {
	status int
	retry  string // Retry-After
	body   string
	took   time.Duration // from the provider's release to the body's end
	err    error
}

// post sends body as user, waits for the provider call, runs cut (the
// database goes), releases the call and returns the answer read to its
// end.
func (o *outage) post(t *testing.T, user, body string, cut func()) answer {
	t.Helper()
	released := make(chan time.Time, 1)
	answers := make(chan answer, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodPost, o.gateway+"/v1/chat/completions", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Test-User", user)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			answers <- answer{err: err}
			return
		}
		defer resp.Body.Close()
		raw, err := io.ReadAll(resp.Body)
		answers <- answer{status: resp.StatusCode, retry: resp.Header.Get("Retry-After"), body: string(raw),
			took: time.Since(<-released), err: err}
	}()
	select {
	case <-o.gp.Entered:
	case a := <-answers:
		t.Fatalf("answered before the provider was called: %d %s %v", a.status, a.body, a.err)
	}
	cut()
	released <- time.Now()
	close(o.gp.Gate)
	a := <-answers
	if a.err != nil {
		t.Fatal(a.err)
	}
	return a
}

// A completion whose usage could not be kept (the database down at its
// end, and a spool that cannot write) is not a success: streamed, it ends
// with the in-stream error and no [DONE]; whole, it is a 503 JSON error.
// Nothing records it as a success: its audit row stays pending and there
// is no record.
func TestCompletionUsageLost(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, body string
		check      func(t *testing.T, a answer)
	}{
		{name: "streamed", body: `{"model":"solo","stream":true,"messages":[{"role":"user","content":"hello"}]}`,
			check: func(t *testing.T, a answer) {
				lines := dataLines(a.body)
				if a.status != 200 || len(lines) < 2 || !strings.Contains(lines[len(lines)-1], `"code":"UNAVAILABLE"`) ||
					strings.Contains(a.body, "[DONE]") {
					t.Errorf("got %d %q, want the answer's chunks then the in-stream error UNAVAILABLE and no [DONE]", a.status, a.body)
				}
			}},
		{name: "whole", body: `{"model":"solo","messages":[{"role":"user","content":"hello"}]}`,
			check: func(t *testing.T, a answer) {
				if a.status != 503 || !strings.Contains(a.body, `"code":"UNAVAILABLE"`) || a.retry == "" {
					t.Errorf("got %d %q (Retry-After %q), want 503 UNAVAILABLE with Retry-After", a.status, a.body, a.retry)
				}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := newOutage(t, spool.Params{RetryFor: 300 * time.Millisecond, Attempt: 500 * time.Millisecond},
				func(u string) string { return u })
			a := o.post(t, "u-lost", tc.body, func() { o.proxy.Cut(); o.breakSpool(t) })
			tc.check(t, a)

			o.proxy.Restore()
			var status string
			if err := o.direct.QueryRow(context.Background(), `SELECT status FROM ai_audit_log WHERE user_id = 'u-lost'
				UNION ALL SELECT 'pending' FROM ai_audit_pending WHERE user_id = 'u-lost'`).Scan(&status); err != nil {
				t.Fatal(err)
			}
			if status != "pending" {
				t.Errorf("audit row %q, want pending: the completion's end never reached the database", status)
			}
			var n int
			if err := o.direct.QueryRow(context.Background(), `SELECT count(*) FROM usage_records WHERE user_id = 'u-lost'`).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n != 0 {
				t.Errorf("%d records, want none", n)
			}
		})
	}
}

// endBound is the documented bound of a completion's end whatever the
// database does (docs/billing.md, "Durability": the database is tried for
// up to 3 s, then the job is spooled), plus room for a loaded 2-core
// machine to write the spool file and the last line.
const endBound = 3*time.Second + 600*time.Millisecond

// A completion's end is bounded as documented when the database refuses
// connections and when it hangs, with the pool's own connect timeout (the
// proxy's URL sets a shorter one): the answer then comes within endBound
// of the model's, its end spooled.
func TestCompletionEndBounded(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, body string
		cut        func(*pgtest.Proxy)
	}{
		{name: "refused/whole", body: `{"model":"solo","messages":[{"role":"user","content":"hello"}]}`, cut: (*pgtest.Proxy).Cut},
		{name: "hanging/whole", body: `{"model":"solo","messages":[{"role":"user","content":"hello"}]}`, cut: (*pgtest.Proxy).Freeze},
		{name: "hanging/streamed", body: `{"model":"solo","stream":true,"messages":[{"role":"user","content":"hello"}]}`, cut: (*pgtest.Proxy).Freeze},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := newOutage(t, spool.Params{}, func(u string) string {
				return strings.Replace(u, "connect_timeout=1", "connect_timeout=0", 1) // the pool's default
			})
			defer o.proxy.Thaw()
			a := o.post(t, "u-bound", tc.body, func() { tc.cut(o.proxy) })
			t.Logf("the model's end to the answer's with the database %s: %s (bound %s)", tc.name, a.took.Round(time.Millisecond), endBound)
			if a.took > endBound {
				t.Errorf("the answer ended %s after the model's, want at most %s", a.took.Round(time.Millisecond), endBound)
			}
			if a.status != 200 || !(strings.Contains(a.body, "[DONE]") || strings.Contains(a.body, `"chat.completion"`)) {
				t.Errorf("got %d %q, want the whole answer: its end is spooled", a.status, a.body)
			}
			if n, err := o.sp.Pending(); n != 1 || err != nil {
				t.Errorf("spooled jobs: %d (%v), want 1", n, err)
			}
		})
	}
}
