package tools

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/auth"
	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/internal/httpx"
)

// fakePlans stands in for package quota: the plan is the principal's claim,
// or "free".
type fakePlans struct{ err error }

func (f fakePlans) PlanFor(_ context.Context, p auth.Principal) (string, config.Plan, error) {
	if f.err != nil {
		return "", config.Plan{}, f.err
	}
	if p.Plan == "" {
		return "free", config.Plan{}, nil
	}
	return p.Plan, config.Plan{}, nil
}

var testPlans = []string{"free", "pro"}

const objectSchema = `{"type":"object","properties":{},"additionalProperties":false}`

// echoTool returns its arguments and the user it was given.
func echoTool(name string) *Tool {
	return &Tool{
		Name: name, Description: "Echoes its arguments.", Voice: true,
		Parameters: json.RawMessage(`{"type":"object","properties":{
			"text":{"type":"string","maxLength":2000},"n":{"type":"integer","minimum":0,"maximum":100}},
			"required":["text"],"additionalProperties":false}`),
		Run: func(_ context.Context, inv Invocation) (Outcome, error) {
			var a map[string]any
			if err := inv.Decode(&a); err != nil {
				return Outcome{}, err
			}
			return Outcome{Data: map[string]any{"args": a, "user": inv.UserID, "session": inv.SessionID}}, nil
		},
	}
}

func mustRegistry(t testing.TB, p RegistryParams) *Registry {
	t.Helper()
	if p.Plans == nil {
		p.Plans = testPlans
	}
	r, err := NewRegistry(p)
	if err != nil {
		t.Fatalf("NewRegistry: %v", err)
	}
	return r
}

func mustExecutor(t testing.TB, pool *pgxpool.Pool, reg *Registry) *Executor {
	t.Helper()
	e, err := NewExecutor(ExecutorParams{DB: pool, Registry: reg, Plans: fakePlans{},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatalf("NewExecutor: %v", err)
	}
	return e
}

func chatCall(session, callID, name, args string) Call {
	return Call{SessionID: session, SessionKind: KindChat, CallID: callID, Name: name,
		Arguments: []byte(args), Principal: auth.Principal{UserID: "u1"}}
}

func wantCode(t testing.TB, err error, want apierr.Code) {
	t.Helper()
	var e *apierr.Error
	if !errors.As(err, &e) {
		t.Fatalf("got error %v, want code %s", err, want)
	}
	if e.Code != want {
		t.Fatalf("got code %s (%s), want %s", e.Code, e.Message, want)
	}
}

type rowState struct {
	Status    string
	ErrorCode *string
	Count     int
}

func callRowState(t testing.TB, pool *pgxpool.Pool, session, callID string) rowState {
	t.Helper()
	var s rowState
	err := pool.QueryRow(context.Background(),
		`SELECT max(status), max(error_code), count(*) FROM tool_calls WHERE session_id = $1 AND call_id = $2`,
		session, callID).Scan(&s.Status, &s.ErrorCode, &s.Count)
	if err != nil {
		t.Fatalf("read tool_calls: %v", err)
	}
	return s
}

func sleepTool(name string, d time.Duration, timeout time.Duration) *Tool {
	return &Tool{Name: name, Description: "Sleeps.", Parameters: json.RawMessage(objectSchema), Timeout: timeout,
		Run: func(ctx context.Context, _ Invocation) (Outcome, error) {
			// measurement window: the tool runs this long and ignores ctx on
			// purpose; the test measures that the executor returns anyway.
			time.Sleep(d)
			return Outcome{Data: "late"}, nil
		}}
}

func writeErr(w http.ResponseWriter, r *http.Request, err error) { httpx.Error(w, r, err) }
