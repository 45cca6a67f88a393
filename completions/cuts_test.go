package completions_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/internal/server"
	"github.com/voxgate/voxgate/internal/spool"
	"github.com/voxgate/voxgate/internal/testgraph"
	"github.com/voxgate/voxgate/internal/testkit"
	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/sim"
)

// runCut runs cuts.mjs once (a streamed or whole answer of route solo to
// message, as user with key for its bearer token) and returns what the
// Node openai client saw. atContent, when set, runs once the client has
// read the answer's first content, and the client reads on.
func runCut(node, dir, base, key, user, mode, message string, atContent func()) (map[string]any, error) {
	return runCutOn(node, dir, base, key, user, mode, message, "solo", atContent)
}

// runCutOn is runCut on route model.
func runCutOn(node, dir, base, key, user, mode, message, model string, atContent func()) (map[string]any, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "cuts.mjs", base, key, user, mode, message, model)
	cmd.Dir = dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	var last string
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if last = sc.Text(); last == "content" && atContent != nil {
			atContent()
		}
	}
	if err := cmd.Wait(); err != nil {
		return nil, fmt.Errorf("node %s %q: %v\n%s", mode, message, err, stderr.String())
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(last), &got); err != nil {
		return nil, fmt.Errorf("node printed %q: %v", last, err)
	}
	return got, nil
}

// heldRoutes is the router with its streams held after their first
// events until the caller's context ends: a model that stops mid-answer,
// which only the completion's own bound or its request's end can stop.
type heldRoutes struct{ llm.Provider }

func (h heldRoutes) Routes() []string { return h.Provider.(interface{ Routes() []string }).Routes() }

func (h heldRoutes) Stream(ctx context.Context, req llm.Request) (llm.Stream, error) {
	st, err := h.Provider.Stream(ctx, req)
	if err != nil {
		return nil, err
	}
	return &heldStream{Stream: st}, nil
}

type heldStream struct {
	llm.Stream
	n int
}

func (s *heldStream) Answering() llm.Target {
	return s.Stream.(interface{ Answering() llm.Target }).Answering()
}

func (s *heldStream) Next(ctx context.Context) (llm.Event, error) {
	if s.n++; s.n > 3 { // after the first sentence, which the output filter lets out
		<-ctx.Done()
		return llm.Event{}, &llm.Error{Code: llm.ProviderNetwork, Err: ctx.Err()}
	}
	return s.Stream.Next(ctx)
}

func held(o *options) {
	router := o.provider
	o.provider = func(p llm.Provider) llm.Provider { return heldRoutes{router(p)} }
}

// raisedCode is the code of the error the Node client raised, "" if it
// returned the answer as whole.
func raisedCode(got map[string]any) string {
	r, _ := got["raised"].(map[string]any)
	if r == nil {
		return ""
	}
	code, _ := r["code"].(string)
	return code
}

// Every way a streamed completion can end early ends with OpenAI's
// in-stream error object, which the official Node client raises, after
// the text it had; only a whole answer whose usage is kept ends with
// [DONE], which the client returns as the answer.
func TestNodeCompletionCuts(t *testing.T) {
	t.Parallel()
	node, dir := testkit.NodeClient(t)
	const story = "Tell me a story"
	// cut is the in-stream error after some text.
	cut := func(t *testing.T, got map[string]any, code string) {
		t.Helper()
		if raisedCode(got) != code || got["text"] == "" {
			t.Errorf("got %v, want text then the client raising %s", got, code)
		}
	}

	t.Run("shutdown", func(t *testing.T) {
		t.Parallel()
		c := newComplFixture(t, held)
		// The server's own Shutdown and base context, as cmd/voxgate runs
		// them: a timeout shorter than the held answer.
		srv := testgraph.Server(t, c.pool)
		srv.Mount([]server.Route{{Pattern: "POST /v1/chat/completions", Handler: srv.AI(c.svc.HandleCompletions), Stream: true}})
		hs := httptest.NewUnstartedServer(srv)
		hs.Config.BaseContext = srv.BaseContext
		hs.Start()
		defer hs.Close()
		stopped := make(chan error, 1)
		got, err := runCut(node, dir, hs.URL+"/v1", testgraph.Token(t, "u-shutdown", "free"), "", "stream", story, func() {
			go func() { stopped <- srv.Shutdown(hs.Config, 50*time.Millisecond) }()
		})
		if err != nil {
			t.Fatal(err)
		}
		cut(t, got, "UNAVAILABLE")
		<-stopped
		testkit.Eventually(t, context.Background(), "the cut answer's record", func() bool { return len(c.records(t, "u-shutdown")) == 1 })
	})

	t.Run("turn timeout", func(t *testing.T) {
		t.Parallel()
		c := newComplFixture(t, held, func(o *options) {
			o.cfg = func(cfg *config.Chat) { cfg.TurnTimeout = 2 * time.Second }
		})
		got, err := runCut(node, dir, c.gateway+"/v1", "a-user-jwt", "u-timeout", "stream", story, nil)
		if err != nil {
			t.Fatal(err)
		}
		cut(t, got, "AI_UNAVAILABLE")
		if r, _ := got["raised"].(map[string]any); r == nil || !strings.Contains(fmt.Sprint(r["message"]), "took too long") {
			t.Errorf("raised %v, want the turn's bound named", r)
		}
	})

	t.Run("provider cut", func(t *testing.T) {
		t.Parallel()
		c := newComplFixture(t)
		c.primary.fault(t, sim.Fault{Kind: sim.FaultCutStream, Fraction: 1, AfterChunks: 3})
		got, err := runCut(node, dir, c.gateway+"/v1", "a-user-jwt", "u-provider-cut", "stream", story, nil)
		if err != nil {
			t.Fatal(err)
		}
		cut(t, got, "AI_UNAVAILABLE")
	})

	// A cut, a stall and an unreadable chunk after commit, each finished
	// on the "continued" route's fallback, which declares prefill.
	for _, fc := range []struct {
		name  string
		fault sim.Fault
	}{
		{"cut at 40 chunks", sim.Fault{Kind: sim.FaultCutStream, Fraction: 1, AfterChunks: 40}},
		{"stall after 20 chunks", sim.Fault{Kind: sim.FaultTimeout, Fraction: 1, AfterChunks: 21}},
		{"an unreadable tenth chunk", sim.Fault{Kind: sim.FaultMalformedJSON, Fraction: 1, AfterChunks: 9}},
	} {
		t.Run("provider "+fc.name+", finished on a fallback that declares prefill", func(t *testing.T) {
			t.Parallel()
			c := newComplFixture(t)
			uncut, err := runCutOn(node, dir, c.gateway+"/v1", "a-user-jwt", "u-uncut", "stream", story, "continued", nil)
			if err != nil || raisedCode(uncut) != "" {
				t.Fatalf("the uncut answer: %v %v", uncut, err)
			}
			c.primary.fault(t, fc.fault)
			got, err := runCutOn(node, dir, c.gateway+"/v1", "a-user-jwt", "u-continued", "stream", story, "continued", nil)
			if err != nil {
				t.Fatal(err)
			}
			if got["raised"] != nil || got["text"] != uncut["text"] || len(c.fallback.requests()) != 1 {
				t.Errorf("got %v, the fallback asked %d times\nwant the uncut answer %q, nothing raised, the fallback once",
					got, len(c.fallback.requests()), uncut["text"])
			}
		})
	}

	// The database goes between admission and the answer's end.
	outageAtTheEnd := func(t *testing.T, lose bool) map[string]any {
		o := newOutage(t, spool.Params{RetryFor: 300 * time.Millisecond, Attempt: 500 * time.Millisecond},
			func(u string) string { return u })
		type result struct {
			got map[string]any
			err error
		}
		results := make(chan result, 1)
		go func() {
			got, err := runCut(node, dir, o.gateway+"/v1", "a-user-jwt", "u-outage", "stream", "hello", nil)
			results <- result{got, err}
		}()
		select {
		case <-o.gp.Entered:
		case r := <-results:
			t.Fatalf("answered before the provider was called: %v %v", r.got, r.err)
		}
		o.proxy.Cut()
		if lose {
			o.breakSpool(t)
		}
		close(o.gp.Gate)
		r := <-results
		if r.err != nil {
			t.Fatal(r.err)
		}
		return r.got
	}
	t.Run("database outage at the end, usage lost", func(t *testing.T) {
		t.Parallel()
		cut(t, outageAtTheEnd(t, true), "UNAVAILABLE")
	})
	t.Run("database outage at the end, usage spooled", func(t *testing.T) {
		t.Parallel()
		if got := outageAtTheEnd(t, false); got["raised"] != nil || got["text"] != "Hello there." {
			t.Errorf("got %v, want the whole answer: its usage is kept in the spool", got)
		}
	})
}
