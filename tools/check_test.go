package tools

import (
	"context"
	"testing"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/pgtest"
)

// Check applies Execute's checks without running or recording the call,
// and lets a standard-tier call through unconfirmed: it is checked to be
// stored for confirmation.
func TestCheckValidatesWithoutRunning(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	runs := 0
	write := echoTool("write")
	write.Voice, write.Tier = false, TierStandard
	body := write.Run
	write.Run = func(ctx context.Context, inv Invocation) (Outcome, error) { runs++; return body(ctx, inv) }
	pro := echoTool("pro_only")
	pro.Plans = []string{"pro"}
	e := mustExecutor(t, pool, mustRegistry(t, RegistryParams{Builtins: []*Tool{write, pro}}))
	ctx := context.Background()

	tool, args, err := e.Check(ctx, chatCall("s1", "c1", "write", `"{\"text\": \"hi\", \"n\": 3}"`))
	if err != nil || tool.Name != "write" || string(args) != `{"n":3,"text":"hi"}` {
		t.Fatalf("valid call: %v %s %v", tool, args, err)
	}
	cases := []struct {
		name string
		call Call
		want apierr.Code
	}{
		{"bad arguments", chatCall("s1", "c2", "write", `{"n":3}`), apierr.ToolValidation},
		{"unknown tool", chatCall("s1", "c3", "nope", `{}`), apierr.ToolNotFound},
		{"plan", chatCall("s1", "c4", "pro_only", `{"text":"x"}`), apierr.ToolNotAllowed},
		{"voice allowlist", func() Call { c := chatCall("s1", "c5", "write", `{"text":"x"}`); c.SessionKind = KindVoice; return c }(), apierr.ToolNotAllowed},
	}
	for _, tc := range cases {
		if _, _, err := e.Check(ctx, tc.call); apierr.CodeOf(err) != tc.want {
			t.Errorf("%s: got %v, want %s", tc.name, err, tc.want)
		}
	}
	if runs != 0 {
		t.Errorf("Check ran the tool %d times", runs)
	}
	var n int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM tool_calls`).Scan(&n); err != nil || n != 0 {
		t.Errorf("%d tool_calls rows after Check (%v), want none", n, err)
	}
}
