package completions_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"

	"github.com/voxgate/voxgate/internal/pgtest"
	"github.com/voxgate/voxgate/internal/spool"
	"github.com/voxgate/voxgate/internal/testgraph"
	"github.com/voxgate/voxgate/internal/testkit"
	"github.com/voxgate/voxgate/llm"
)

// gatedRoutes is a testgraph.Gated in front of the router that still
// lists the router's routes.
type gatedRoutes struct{ *testgraph.Gated }

func (g gatedRoutes) Routes() []string { return g.Provider.(interface{ Routes() []string }).Routes() }

// A completion whose end meets a database that is down is still answered,
// and its record and settlement wait on the durable path: once the
// database is back the record is there exactly once, with the usage the
// client was shown, and a replay of the spooled end changes nothing.
func TestCompletionEndSurvivesADatabaseOutage(t *testing.T) {
	t.Parallel()
	dbURL := pgtest.URL(t)
	proxy := pgtest.NewProxy(t, dbURL)
	direct := pgtest.NewPool(t, dbURL, 2)
	dir := t.TempDir()
	sp, err := spool.New(spool.Params{Dir: dir, RetryFor: 300 * time.Millisecond, Attempt: 500 * time.Millisecond, Logger: testkit.Quiet()})
	if err != nil {
		t.Fatal(err)
	}
	gp := &testgraph.Gated{Entered: make(chan struct{}, 1), Gate: make(chan struct{})}
	c := newComplFixture(t, func(o *options) {
		o.dbURL, o.spool = proxy.URL, sp
		router := o.provider
		o.provider = func(p llm.Provider) llm.Provider {
			gp.Provider = router(p)
			return gatedRoutes{gp}
		}
	})
	count := func(sql string, args ...any) int64 {
		var n int64
		if err := direct.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}

	type answer struct {
		c   *openai.ChatCompletion
		err error
	}
	answers := make(chan answer, 1)
	go func() {
		done, err := c.client("u-outage", "").Chat.Completions.New(context.Background(),
			openai.ChatCompletionNewParams{Model: "chat", Messages: ask("hello")})
		answers <- answer{done, err}
	}()
	select { // admitted: the database goes before the answer ends
	case <-gp.Entered:
	case a := <-answers:
		t.Fatalf("answered before the provider was called: %v", a.err)
	}
	proxy.Cut()
	close(gp.Gate)
	a := <-answers
	if a.err != nil {
		t.Fatalf("the answer during the outage: %v", a.err)
	}
	testkit.Eventually(t, context.Background(), "the end to be spooled", func() bool { n, _ := sp.Pending(); return n == 1 })
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	if len(files) != 1 {
		t.Fatalf("spool files: %v", files)
	}
	spooled, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}

	proxy.Restore()
	runCtx, stopRun := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() { sp.Run(runCtx); close(ran) }()
	stop := sync.OnceFunc(func() { stopRun(); <-ran })
	defer stop()
	testkit.Eventually(t, context.Background(), "the lease to be freed", func() bool { return count(`SELECT count(*) FROM quota_tickets`) == 0 })
	testkit.Eventually(t, context.Background(), "the spool to empty", func() bool { n, _ := sp.Pending(); return n == 0 })
	u := a.c.Usage
	var in, out int64
	var kind, turn string
	if err := direct.QueryRow(context.Background(), `SELECT kind, turn_id, text_in, text_out FROM usage_records WHERE user_id = 'u-outage'`).
		Scan(&kind, &turn, &in, &out); err != nil {
		t.Fatalf("the record after the outage: %v", err)
	}
	if kind != "completion" || turn != a.c.ID || in != u.PromptTokens || out != u.CompletionTokens {
		t.Errorf("record %s %s %d/%d, want completion %s %d/%d", kind, turn, in, out, a.c.ID, u.PromptTokens, u.CompletionTokens)
	}
	tokens := count(`SELECT day_tokens FROM quota_users WHERE user_id = 'u-outage'`)
	if tokens != u.PromptTokens+u.CompletionTokens {
		t.Errorf("settled %d tokens, want %d", tokens, u.PromptTokens+u.CompletionTokens)
	}

	// A crash between the commit and the file's removal: replaying the
	// file writes nothing more.
	stop()
	if err := os.WriteFile(files[0], spooled, 0o600); err != nil {
		t.Fatal(err)
	}
	if n, err := sp.Drain(context.Background()); n != 1 || err != nil {
		t.Fatalf("Drain: %d, %v", n, err)
	}
	if n := count(`SELECT count(*) FROM usage_records WHERE user_id = 'u-outage'`); n != 1 {
		t.Errorf("records after the replay: %d", n)
	}
	if again := count(`SELECT day_tokens FROM quota_users WHERE user_id = 'u-outage'`); again != tokens {
		t.Errorf("tokens after the replay: %d, want %d", again, tokens)
	}
}

// panicky is the router with streams that panic at their second event.
type panicky struct{ llm.Provider }

func (p panicky) Routes() []string { return p.Provider.(interface{ Routes() []string }).Routes() }

func (p panicky) Stream(ctx context.Context, req llm.Request) (llm.Stream, error) {
	st, err := p.Provider.Stream(ctx, req)
	if err != nil {
		return nil, err
	}
	return &midPanicStream{Stream: st}, nil
}

type midPanicStream struct {
	llm.Stream
	n int
}

func (s *midPanicStream) Next(ctx context.Context) (llm.Event, error) {
	if s.n++; s.n == 4 { // after the first sentence, which the output filter lets out
		panic("a bug in the middle of an answer")
	}
	return s.Stream.Next(ctx)
}

// A panic after the first byte ends the stream with the in-stream error,
// never a JSON body after the chunks, and the ticket is still settled.
func TestCompletionPanicMidStream(t *testing.T) {
	t.Parallel()
	c := newComplFixture(t, func(o *options) {
		router := o.provider
		o.provider = func(p llm.Provider) llm.Provider { return panicky{router(p)} }
	})
	body := c.raw(t, "u-panic", `{"model":"chat","stream":true,"messages":[{"role":"user","content":"Tell me a story"}]}`)
	lines := dataLines(body)
	// The content the filter let out before the panic (word by word), then
	// the error as the last line.
	if len(lines) < 2 || !strings.Contains(lines[len(lines)-1], `"code":"INTERNAL"`) ||
		strings.Contains(strings.Join(lines[:len(lines)-1], ""), `"error"`) || strings.Contains(body, "[DONE]") {
		t.Errorf("stream after a panic: %q", body)
	}
	if d := c.day(t, "u-panic"); d.tickets != 0 || d.requests != 1 {
		t.Errorf("day %+v, want the ticket settled", d)
	}
}
