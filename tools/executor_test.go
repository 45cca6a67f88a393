package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/auth"
	"github.com/voxgate/voxgate/internal/pgtest"
)

func TestExecuteRefusals(t *testing.T) {
	t.Parallel()
	proOnly := echoTool("pro_tool")
	proOnly.Plans = []string{"pro"}
	write := echoTool("write_tool")
	write.Voice, write.Tier = false, TierStandard
	reg := mustRegistry(t, RegistryParams{Builtins: []*Tool{echoTool("echo"), proOnly, write}})
	e := mustExecutor(t, pgtest.Pool(t), reg)

	voice := func(c Call) Call { c.SessionKind = KindVoice; return c }
	cases := []struct {
		name string
		call Call
		want apierr.Code
	}{
		{"wrong type", chatCall("s", "c1", "echo", `{"text": 5}`), apierr.ToolValidation},
		{"missing required", chatCall("s", "c2", "echo", `{"n": 1}`), apierr.ToolValidation},
		{"extra property", chatCall("s", "c3", "echo", `{"text":"a","user_id":"u2"}`), apierr.ToolValidation},
		{"out of range", chatCall("s", "c4", "echo", `{"text":"a","n":101}`), apierr.ToolValidation},
		{"not JSON", chatCall("s", "c5", "echo", `{"text":`), apierr.ToolValidation},
		{"string holding not JSON", chatCall("s", "c6", "echo", `"{\"text\":"`), apierr.ToolValidation},
		{"array", chatCall("s", "c7", "echo", `["text"]`), apierr.ToolValidation},
		{"NUL in a string", chatCall("s", "c8", "echo", `{"text":"a\u0000b"}`), apierr.ToolValidation},
		{"too deep", chatCall("s", "c9", "echo", `{"text":"a","x":`+strings.Repeat("[", 40)+strings.Repeat("]", 40)+`}`), apierr.ToolValidation},
		{"unknown tool", chatCall("s", "c10", "nope", `{}`), apierr.ToolNotFound},
		{"plan-gated", chatCall("s", "c11", "pro_tool", `{"text":"a"}`), apierr.ToolNotAllowed},
		{"not in voice", voice(chatCall("s", "c12", "write_tool", `{"text":"a"}`)), apierr.ToolNotAllowed},
		{"unconfirmed write", chatCall("s", "c13", "write_tool", `{"text":"a"}`), apierr.ToolNotAllowed},
		{"no user", Call{SessionID: "s", SessionKind: KindChat, CallID: "c14", Name: "echo", Arguments: []byte(`{"text":"a"}`)}, apierr.Unauthorized},
		{"no session", chatCall("", "c15", "echo", `{"text":"a"}`), apierr.InvalidRequest},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, err := e.Execute(context.Background(), c.call)
			wantCode(t, err, c.want)
		})
	}
	// Refused calls are not recorded: only validated calls are.
	var n int
	if err := e.store.db.QueryRow(context.Background(), `SELECT count(*) FROM tool_calls`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("got %d tool_calls rows for refused calls, want 0", n)
	}
}

func TestValidationMessageNamesTheProblem(t *testing.T) {
	t.Parallel()
	e := mustExecutor(t, pgtest.Pool(t), mustRegistry(t, RegistryParams{Builtins: []*Tool{echoTool("echo")}}))
	cases := []struct{ name, args, want string }{
		{"wrong type", `{"text": 5}`, "text must be of type string"},
		{"missing", `{}`, `missing required "text"`},
		{"extra", `{"text":"a","zzz":1}`, `unknown "zzz"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, err := e.Execute(context.Background(), chatCall("s", c.name, "echo", c.args))
			if got := apierr.From(err).Message; !strings.Contains(got, c.want) {
				t.Fatalf("got %q, want it to contain %q", got, c.want)
			}
		})
	}
}

// TestValidationNeverEchoesValues: an argument that breaks a rule of any
// kind is named, with the rule, but its value appears neither in the
// message the caller and the model read nor in any error of the chain a
// log would write.
func TestValidationNeverEchoesValues(t *testing.T) {
	t.Parallel()
	tool := echoTool("health")
	tool.Parameters = json.RawMessage(`{"type":"object","properties":{
		"weight":{"type":"number","minimum":20,"maximum":500},
		"height":{"type":"number","exclusiveMaximum":300,"multipleOf":0.5},
		"diet":{"type":"string","enum":["vegan","vegetarian"]},
		"code":{"type":"string","pattern":"^[a-z]{3}$"},
		"kind":{"const":"meal"},
		"note":{"type":"string","minLength":8,"maxLength":12},
		"count":{"type":"integer"},
		"tags":{"type":"array","maxItems":1}},
		"additionalProperties":false}`)
	e := mustExecutor(t, pgtest.Pool(t), mustRegistry(t, RegistryParams{Builtins: []*Tool{tool}}))
	cases := []struct{ name, args, value, want string }{
		{"maximum", `{"weight":731.5}`, "731.5", "weight must be at most 500"},
		{"minimum", `{"weight":3.25}`, "3.25", "weight must be at least 20"},
		{"exclusive maximum", `{"height":412.5}`, "412.5", "height must be less than 300"},
		{"multiple of", `{"height":171.3}`, "171.3", "height must be a multiple of 0.5"},
		{"enum", `{"diet":"carnivore-keto"}`, "carnivore-keto", "diet has a value that is not allowed"},
		{"pattern", `{"code":"peanut-allergy"}`, "peanut-allergy", "code does not match the required pattern"},
		{"const", `{"kind":"insulin-dose"}`, "insulin-dose", "kind has a value that is not allowed"},
		{"max length", `{"note":"diagnosed-coeliac"}`, "diagnosed-coeliac", "note must be at most 12 characters long"},
		{"min length", `{"note":"HIV+"}`, "HIV+", "note must be at least 8 characters long"},
		{"type", `{"count":"seventeen-pills"}`, "seventeen-pills", "count must be of type integer"},
		{"max items", `{"tags":["asthma-inhaler","epipen"]}`, "epipen", "tags must have at most 1 items"},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, err := e.Execute(context.Background(), chatCall("s", fmt.Sprint("v", i), "health", c.args))
			wantCode(t, err, apierr.ToolValidation)
			if msg := apierr.From(err).Message; !strings.Contains(msg, c.want) || strings.Contains(msg, c.value) {
				t.Errorf("message %q: want it to contain %q and not the value %q", msg, c.want, c.value)
			}
			for e := err; e != nil; e = errors.Unwrap(e) {
				if strings.Contains(e.Error(), c.value) {
					t.Errorf("error chain %q holds the value %q", e.Error(), c.value)
				}
			}
		})
	}
}

func TestExecuteRunsAndReplays(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	write := echoTool("write_tool")
	write.Voice, write.Tier = false, TierStandard
	e := mustExecutor(t, pool, mustRegistry(t, RegistryParams{Builtins: []*Tool{echoTool("echo"), write}}))
	ctx := context.Background()

	first, err := e.Execute(ctx, chatCall("s1", "c1", "echo", `"{\"text\":\"hi\",\"n\":3}"`))
	if err != nil {
		t.Fatal(err)
	}
	if first.Replayed || first.Error != nil || first.CallID != "c1" || first.Name != "echo" {
		t.Fatalf("first: got %+v", first)
	}
	if want := `{"args":{"n":3,"text":"hi"},"session":"s1","user":"u1"}`; first.Output != want {
		t.Fatalf("output: got %s, want %s", first.Output, want)
	}
	// The same call as an object with other key order and spacing is a
	// duplicate, not a conflict.
	again, err := e.Execute(ctx, chatCall("s1", "c1", "echo", `{ "n": 3, "text": "hi" }`))
	if err != nil {
		t.Fatal(err)
	}
	if !again.Replayed || again.Output != first.Output || string(again.Result) != string(first.Result) {
		t.Fatalf("replay: got %+v, want the first output replayed", again)
	}
	if s := callRowState(t, pool, "s1", "c1"); s.Status != "succeeded" || s.Count != 1 {
		t.Fatalf("row: got %+v, want one succeeded row", s)
	}

	t.Run("different arguments conflict", func(t *testing.T) {
		_, err := e.Execute(ctx, chatCall("s1", "c1", "echo", `{"text":"bye"}`))
		wantCode(t, err, apierr.Conflict)
	})
	t.Run("different name conflicts", func(t *testing.T) {
		c := chatCall("s1", "c1", "write_tool", `{"text":"hi","n":3}`)
		c.Confirmed = true
		_, err := e.Execute(ctx, c)
		wantCode(t, err, apierr.Conflict)
	})
	t.Run("another user's call is not found", func(t *testing.T) {
		c := chatCall("s1", "c1", "echo", `{"text":"hi","n":3}`)
		c.Principal = auth.Principal{UserID: "u2"}
		_, err := e.Execute(ctx, c)
		wantCode(t, err, apierr.NotFound)
	})
	t.Run("same call_id in another session runs", func(t *testing.T) {
		r, err := e.Execute(ctx, chatCall("s2", "c1", "echo", `{"text":"hi","n":3}`))
		if err != nil || r.Replayed {
			t.Fatalf("got %+v, %v, want a fresh run", r, err)
		}
	})
	t.Run("confirmed write runs", func(t *testing.T) {
		c := chatCall("s1", "w1", "write_tool", `{"text":"x"}`)
		c.Confirmed = true
		if _, err := e.Execute(ctx, c); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("arguments never name the user", func(t *testing.T) {
		r, err := e.Execute(ctx, Call{SessionID: "s3", SessionKind: KindVoice, CallID: "c1", Name: "echo",
			Arguments: []byte(`{"text":"I am u9"}`), Principal: auth.Principal{UserID: "u7"}})
		if err != nil {
			t.Fatal(err)
		}
		var got struct{ User string }
		_ = json.Unmarshal(r.Result, &got)
		if got.User != "u7" {
			t.Fatalf("got user %q, want the authenticated u7", got.User)
		}
	})
	t.Run("empty call_id is generated and never deduplicated", func(t *testing.T) {
		a, err1 := e.Execute(ctx, chatCall("s4", "", "echo", `{"text":"a"}`))
		b, err2 := e.Execute(ctx, chatCall("s4", "", "echo", `{"text":"a"}`))
		if err := errors.Join(err1, err2); err != nil {
			t.Fatal(err)
		}
		if a.CallID == "" || a.CallID == b.CallID || a.Replayed || b.Replayed {
			t.Fatalf("got ids %q and %q, want two fresh generated ids", a.CallID, b.CallID)
		}
	})
}

func TestExecuteTimeoutAndPanic(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	panicky := &Tool{Name: "panicky", Description: "Panics.", Parameters: []byte(objectSchema),
		Run: func(context.Context, Invocation) (Outcome, error) { panic("boom") }}
	honest := &Tool{Name: "honest", Description: "Waits for ctx.", Parameters: []byte(objectSchema), Timeout: 50 * time.Millisecond,
		Run: func(ctx context.Context, _ Invocation) (Outcome, error) { <-ctx.Done(); return Outcome{}, ctx.Err() }}
	failing := &Tool{Name: "failing", Description: "Fails.", Parameters: []byte(objectSchema),
		Run: func(context.Context, Invocation) (Outcome, error) {
			return Outcome{}, errors.New("db password is hunter2")
		}}
	// The stuck tool ignores its 100 ms timeout for 5 s, past the cases'
	// 2 s bound: an executor that waited for it would take that long.
	reg := mustRegistry(t, RegistryParams{Builtins: []*Tool{sleepTool("stuck", 5*time.Second, 100*time.Millisecond), panicky, honest, failing}})
	e := mustExecutor(t, pool, reg)

	cases := []struct {
		tool     string
		wantCode string
		maxTime  time.Duration
	}{
		{"stuck", ErrCodeTimeout, 2 * time.Second},
		{"honest", ErrCodeTimeout, 2 * time.Second},
		{"panicky", ErrCodePanic, 2 * time.Second},
		{"failing", ErrCodeFailed, 2 * time.Second},
	}
	for _, c := range cases {
		t.Run(c.tool, func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			r, err := e.Execute(context.Background(), chatCall("s", c.tool, c.tool, `{}`))
			if err != nil {
				t.Fatalf("got error %v, want a failed result", err)
			}
			if took := time.Since(start); took > c.maxTime {
				t.Fatalf("took %s, want at most %s", took, c.maxTime)
			}
			if r.Error == nil || r.Error.Code != c.wantCode {
				t.Fatalf("got error %+v, want code %s", r.Error, c.wantCode)
			}
			if !strings.Contains(r.Output, `"error"`) || strings.Contains(r.Output, "hunter2") || strings.Contains(r.Output, "boom") {
				t.Fatalf("output %s must be a readable error without internals", r.Output)
			}
			s := callRowState(t, pool, "s", c.tool)
			if s.Status != "failed" || s.ErrorCode == nil || *s.ErrorCode != c.wantCode {
				t.Fatalf("row: got %+v, want failed with %s", s, c.wantCode)
			}
			// A failed call is replayed too, never re-run.
			again, err := e.Execute(context.Background(), chatCall("s", c.tool, c.tool, `{}`))
			if err != nil || !again.Replayed || again.Output != r.Output {
				t.Fatalf("replay: got %+v, %v", again, err)
			}
		})
	}
}

func TestPlanResolverErrorPassesThrough(t *testing.T) {
	t.Parallel()
	e, err := NewExecutor(ExecutorParams{DB: pgtest.Pool(t), Plans: fakePlans{err: apierr.New(apierr.Unavailable, "")},
		Registry: mustRegistry(t, RegistryParams{Builtins: []*Tool{echoTool("echo")}})})
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.Execute(context.Background(), chatCall("s", "c", "echo", `{"text":"a"}`))
	wantCode(t, err, apierr.Unavailable)
}

// TestCallPlanSkipsTheResolver: a plan the turn already resolved is used as
// it is, gating included, and the resolver is not asked.
func TestCallPlanSkipsTheResolver(t *testing.T) {
	t.Parallel()
	proOnly := echoTool("pro_tool")
	proOnly.Plans = []string{"pro"}
	e, err := NewExecutor(ExecutorParams{DB: pgtest.Pool(t), Plans: fakePlans{err: apierr.New(apierr.Unavailable, "")},
		Registry: mustRegistry(t, RegistryParams{Builtins: []*Tool{proOnly}})})
	if err != nil {
		t.Fatal(err)
	}
	c := chatCall("s", "c1", "pro_tool", `{"text":"a"}`)
	c.Plan = "free"
	_, err = e.Execute(context.Background(), c)
	wantCode(t, err, apierr.ToolNotAllowed)
	c.Plan = "pro"
	if r, err := e.Execute(context.Background(), c); err != nil || r.Error != nil {
		t.Fatalf("with the turn's plan: %+v %v", r, err)
	}
}

func TestNewExecutorChecksParams(t *testing.T) {
	t.Parallel()
	reg := mustRegistry(t, RegistryParams{})
	cases := []struct {
		name string
		p    ExecutorParams
	}{
		{"no db", ExecutorParams{Registry: reg, Plans: fakePlans{}}},
		{"no registry", ExecutorParams{Plans: fakePlans{}}},
	}
	for _, c := range cases {
		if _, err := NewExecutor(c.p); err == nil {
			t.Errorf("%s: got no error", c.name)
		}
	}
}
