package audit

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/database"
	"github.com/voxgate/voxgate/internal/pgtest"
)

func newLog(t *testing.T) (*Log, *pgxpool.Pool) {
	t.Helper()
	pool := pgtest.Pool(t)
	return New(pool), pool
}

func chatRow(id string) Row {
	return Row{ID: id, Kind: KindChat, UserID: "u1", SessionID: "s1", Route: "default", InputHash: Hash("hello")}
}

// Every final status of DESIGN §12 is a transition from pending, once: a
// replay of the same end changes nothing, and a second, different final
// status is refused while the first stands.
func TestTransitions(t *testing.T) {
	t.Parallel()
	l, _ := newLog(t)
	ctx := context.Background()
	for _, st := range Finals {
		t.Run(string(st), func(t *testing.T) {
			r := chatRow("turn_" + string(st))
			if err := l.Begin(ctx, r); err != nil {
				t.Fatal(err)
			}
			got, err := l.Get(ctx, r.ID)
			if err != nil || got.Status != Pending || got.FinishedAt != nil {
				t.Fatalf("after Begin: %+v %v, want pending without finished_at", got, err)
			}
			r.Status, r.Provider, r.Model, r.OutputHash = st, "openai", "gpt-4.1-mini", Hash("hi")
			if st == Success {
				r.FiltersRan = Required(KindChat)
			}
			r.FailoverTrace = []TraceEntry{{Call: 1, Entry: "openai/gpt-4.1-mini:success", Status: 200, DurationMS: 12}}
			if err := l.Finish(ctx, r); err != nil {
				t.Fatalf("Finish %s: %v", st, err)
			}
			if err := l.Finish(ctx, r); err != nil {
				t.Errorf("replaying the same end: %v, want nil", err)
			}
			other := r
			other.Status = Refused
			if st == Refused {
				other.Status = Degraded
			}
			if err := l.Finish(ctx, other); !errors.Is(err, ErrFinal) || apierr.CodeOf(err) != apierr.Conflict {
				t.Errorf("a second final status: %v, want ErrFinal as CONFLICT", err)
			}
			got, err = l.Get(ctx, r.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.Status != st || got.FinishedAt == nil || got.Provider != "openai" || got.OutputHash != Hash("hi") ||
				got.InputHash != Hash("hello") || len(got.FailoverTrace) != 1 {
				t.Errorf("the row: %+v, want %s by openai with both hashes and its trace", got, st)
			}
		})
	}
}

// Success with a required filter missing is refused, in Go and by the
// database's CHECK: the Go list and the constraint say the same, kind by
// kind, filter by filter.
func TestSuccessNeedsEveryFilter(t *testing.T) {
	t.Parallel()
	l, pool := newLog(t)
	ctx := context.Background()
	for _, k := range Kinds {
		req := Required(k)
		for i := range req {
			missing := slices.Delete(slices.Clone(req), i, i+1)
			r := Row{ID: string(k) + "_" + req[i], Kind: k, UserID: "u1", SessionID: "s1", Status: Success, FiltersRan: missing}
			if err := l.Finish(ctx, r); err == nil {
				t.Errorf("%s success without %s: nil error, want a refusal", k, req[i])
			}
			// The database refuses it as well, whatever the Go side says.
			_, err := pool.Exec(ctx, `INSERT INTO ai_audit_log (turn_id, kind, user_id, session_id, route, status,
				failover_trace, duration_ms, filters_ran, finished_at) VALUES ($1, $2, 'u1', 's1', '', 'success', '[]', 0, $3, now())`,
				r.ID, k, missing)
			if database.SQLState(err) != "23514" {
				t.Errorf("%s success without %s in SQL: %v, want a CHECK violation", k, req[i], err)
			}
			if got := Settle(k, Success, missing); got != Degraded {
				t.Errorf("Settle(%s, success, without %s) = %s, want degraded", k, req[i], got)
			}
		}
		r := Row{ID: string(k) + "_all", Kind: k, UserID: "u1", SessionID: "s1", Status: Success, FiltersRan: req}
		if err := l.Finish(ctx, r); err != nil {
			t.Errorf("%s success with every filter: %v", k, err)
		}
		if got := Settle(k, Success, req); got != Success {
			t.Errorf("Settle(%s, success, all) = %s, want success", k, got)
		}
	}
}

// A unit whose pending row is missing still gets its final row; a row
// never changes hands between users or kinds.
func TestFinishWithoutBegin(t *testing.T) {
	t.Parallel()
	l, _ := newLog(t)
	ctx := context.Background()
	r := chatRow("turn_nobegin")
	r.Status = Refused
	r.ErrorCode = "AI_UNAVAILABLE"
	if err := l.Finish(ctx, r); err != nil {
		t.Fatal(err)
	}
	got, err := l.Get(ctx, r.ID)
	if err != nil || got.Status != Refused || got.ErrorCode != "AI_UNAVAILABLE" {
		t.Fatalf("got %+v %v, want refused AI_UNAVAILABLE", got, err)
	}
	b := chatRow("turn_owned")
	if err := l.Begin(ctx, b); err != nil {
		t.Fatal(err)
	}
	b.UserID, b.Status = "u2", Degraded
	if err := l.Finish(ctx, b); apierr.CodeOf(err) != apierr.Conflict {
		t.Errorf("another user's row: %v, want CONFLICT", err)
	}
	if got, _ := l.Get(ctx, b.ID); got.Status != Pending || got.UserID != "u1" {
		t.Errorf("the row after another user's Finish: %+v, want u1's, pending", got)
	}
}

func TestRowChecks(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		row  Row
	}{
		{"no id", Row{Kind: KindChat, UserID: "u", Status: Degraded}},
		{"unknown kind", Row{ID: "x", Kind: "voice", UserID: "u", Status: Degraded}},
		{"unknown status", Row{ID: "x", Kind: KindChat, UserID: "u", Status: "ok"}},
		{"success, pii missing", Row{ID: "x", Kind: KindChat, UserID: "u", Status: Success,
			FiltersRan: []string{FilterInput, FilterMedical, FilterPrescriptive}}},
	} {
		if err := tc.row.check(); err == nil {
			t.Errorf("%s: nil, want an error", tc.name)
		}
	}
}

func TestForCode(t *testing.T) {
	t.Parallel()
	for code, want := range map[apierr.Code]Status{
		apierr.AIValidation: ValidationError, apierr.ToolValidation: ValidationError, apierr.AIParseError: ParseError,
		apierr.AIPIILeak: PIILeak, apierr.AIContentFiltered: Refused, apierr.AIUnavailable: Refused, "cancelled": Refused,
	} {
		if got := ForCode(code); got != want {
			t.Errorf("ForCode(%s) = %s, want %s", code, got, want)
		}
	}
}

func TestHash(t *testing.T) {
	t.Parallel()
	if got := Hash("abc"); got != "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" {
		t.Errorf("Hash(abc) = %s", got)
	}
	if Hash("") != "" {
		t.Error("Hash of nothing must be empty")
	}
}
