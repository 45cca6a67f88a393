package tools

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/voxgate/voxgate/internal/pgtest"
	"github.com/voxgate/voxgate/safety"
)

// cardTool returns its text as a card too, so the screen of cards is
// exercised by what the test sends.
func cardTool(name string) *Tool {
	t := echoTool(name)
	run := t.Run
	t.Run = func(ctx context.Context, inv Invocation) (Outcome, error) {
		o, err := run(ctx, inv)
		var a struct{ Text string }
		if err == nil {
			err = inv.Decode(&a)
		}
		card, cerr := NewCard("note", map[string]string{"text": a.Text})
		o.Cards = []Card{card}
		return o, errors.Join(err, cerr)
	}
	return t
}

// TestScreenEveryCall: the executor's screen refuses a call whose
// arguments hold a claim or personal data, in English and Spanish, with
// the profile's language or none, and lets a benign one run.
func TestScreenEveryCall(t *testing.T) {
	reg := mustRegistry(t, RegistryParams{Builtins: []*Tool{cardTool("note")}})
	pool := pgtest.Pool(t)
	e, err := NewExecutor(ExecutorParams{DB: pool, Registry: reg, Plans: fakePlans{},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Screen: safety.CheckText})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, lang, text string
		want             safety.Outcome
	}{
		{"es claim", "es", "La canela cura la diabetes tipo 2.", safety.Blocked},
		{"es claim detected", "", "Deja de tomar tu insulina y come más cúrcuma.", safety.Blocked},
		{"es benign", "es-MX", "Sopa de lentejas con zanahoria y comino para cuatro personas.", safety.Pass},
		{"es pii", "es", "Escríbeme a maria.lopez@example.com mañana.", safety.Leak},
		{"en claim", "en", "Cinnamon cures type 2 diabetes.", safety.Blocked},
		{"en benign", "", "Lentil soup with carrots and cumin for four people.", safety.Pass},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := chatCall("s-screen", "c"+string(rune('a'+i)), "note", `{"text":"`+tc.text+`"}`)
			c.Language = tc.lang
			res, err := e.Execute(context.Background(), c)
			if err != nil {
				t.Fatalf("Execute: %v", err)
			}
			if tc.want == safety.Pass {
				if res.Error != nil || len(res.Cards) != 1 {
					t.Fatalf("benign call: error %v, cards %d, want it run with its card", res.Error, len(res.Cards))
				}
				return
			}
			if res.Error == nil || res.Error.Code != UnsafeArguments || !strings.Contains(res.Output, UnsafeArguments) ||
				len(res.Cards) != 0 || len(res.Screened) == 0 {
				t.Fatalf("unsafe call ran or was not refused: %+v", res)
			}
			if flagged := len(res.SafetyFlags) == 1 && res.SafetyFlags[0].Type == safety.MedicalClaim; flagged != (tc.want == safety.Blocked) {
				t.Fatalf("flags %+v for outcome %v", res.SafetyFlags, tc.want)
			}
			var rows int
			if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM tool_calls WHERE session_id = $1 AND call_id = $2`,
				c.SessionID, c.CallID).Scan(&rows); err != nil || rows != 0 {
				t.Fatalf("a refused call has %d tool_calls rows (%v)", rows, err)
			}
			var u *Unsafe
			if _, _, err := e.Check(context.Background(), c); !errors.As(err, &u) {
				t.Fatalf("Check: %v, want *Unsafe", err)
			}
		})
	}
}

// yesJudge answers every question the same and counts them.
type yesJudge struct {
	claim bool
	asked int
}

func (j *yesJudge) Judge(string, string) (claim, ok bool) {
	j.asked++
	return j.claim, true
}

// TestScreenAsksTheCallsJudge: the screen asks the caller's judge about
// the sentences the claim model is unsure of, as the answer's filter
// does (a band wide enough to hold every sentence, so the test does not
// hang on the model's scores): a judge that calls a benign sentence with
// a risk word a claim refuses the call, one that clears a claim lets it
// run with the clearing in its rule ids, and a call with no judge is the
// model's alone.
func TestScreenAsksTheCallsJudge(t *testing.T) {
	reg := mustRegistry(t, RegistryParams{Builtins: []*Tool{cardTool("note")}})
	e, err := NewExecutor(ExecutorParams{DB: pgtest.Pool(t), Registry: reg, Plans: fakePlans{},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Screen: safety.CheckText})
	if err != nil {
		t.Fatal(err)
	}
	const benign, claim = "Lentil soup is a good lunch if you watch your blood sugar.", "Cinnamon cures type 2 diabetes."
	for i, tc := range []struct {
		name, text string
		judge      *yesJudge
		refused    bool
		rule       string
	}{
		{"no judge, benign", benign, nil, false, ""},
		{"no judge, claim", claim, nil, true, ""},
		{"the judge finds a claim", benign, &yesJudge{claim: true}, true, safety.RuleClaimJudge},
		{"the judge clears a claim", claim, &yesJudge{claim: false}, false, safety.RuleJudgeCleared},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := chatCall("s-judge", "j"+string(rune('a'+i)), "note", `{"text":"`+tc.text+`"}`)
			if tc.judge != nil {
				c.Judge, c.JudgeBand = tc.judge, 100
			}
			res, err := e.Execute(context.Background(), c)
			if err != nil {
				t.Fatalf("Execute: %v", err)
			}
			if refused := res.Error != nil && res.Error.Code == UnsafeArguments; refused != tc.refused {
				t.Fatalf("refused %v (%+v), want %v", refused, res.Error, tc.refused)
			}
			if tc.judge == nil {
				return
			}
			if tc.judge.asked == 0 || !slices.Contains(res.Screened, tc.rule) {
				t.Fatalf("judge asked %d times, rules %v; want it asked and %s", tc.judge.asked, res.Screened, tc.rule)
			}
		})
	}
}
