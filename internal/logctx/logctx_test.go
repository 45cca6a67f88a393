package logctx_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/voxgate/voxgate/internal/auth"
	"github.com/voxgate/voxgate/internal/httpx"
	"github.com/voxgate/voxgate/internal/logctx"
)

func TestHandlerTagsRequestLines(t *testing.T) {
	t.Parallel()
	request := httpx.WithRequestID(context.Background(), "req-7")
	caller := auth.WithPrincipal(request, auth.Principal{UserID: "u-1"})
	cases := []struct {
		name     string
		log      func(l *slog.Logger)
		wrap     func(h slog.Handler) slog.Handler
		wantID   string // "" means the key must be absent
		wantUser string
	}{
		{name: "no context", log: func(l *slog.Logger) { l.Info("boot") }},
		{name: "background context", log: func(l *slog.Logger) { l.InfoContext(context.Background(), "tick") }},
		{name: "request", log: func(l *slog.Logger) { l.WarnContext(request, "slow") }, wantID: "req-7"},
		{name: "authenticated request", log: func(l *slog.Logger) { l.ErrorContext(caller, "failed") },
			wantID: "req-7", wantUser: "u-1"},
		{name: "line names another user", log: func(l *slog.Logger) { l.InfoContext(caller, "granted", "user_id", "u-2") },
			wantID: "req-7", wantUser: "u-2"},
		{name: "id given in the line", log: func(l *slog.Logger) {
			l.LogAttrs(caller, slog.LevelInfo, "request", slog.String("request_id", "req-7"))
		}, wantID: "req-7", wantUser: "u-1"},
		{name: "id bound with With", log: func(l *slog.Logger) { l.With("request_id", "req-7").InfoContext(caller, "x") },
			wantID: "req-7", wantUser: "u-1"},
		{name: "wrapped twice", wrap: func(h slog.Handler) slog.Handler { return logctx.New(h) },
			log: func(l *slog.Logger) { l.InfoContext(caller, "x") }, wantID: "req-7", wantUser: "u-1"},
		{name: "attrs bound, then logged", log: func(l *slog.Logger) { l.With("tool", "t").InfoContext(request, "x") },
			wantID: "req-7"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var buf bytes.Buffer
			h := logctx.New(slog.NewJSONHandler(&buf, nil))
			if tc.wrap != nil {
				h = tc.wrap(h)
			}
			tc.log(slog.New(h))
			line := buf.String()
			for key, want := range map[string]string{"request_id": tc.wantID, "user_id": tc.wantUser} {
				n := strings.Count(line, `"`+key+`":`)
				switch {
				case want == "" && n != 0:
					t.Fatalf("%s: got %d, want none in %s", key, n, line)
				case want != "" && n != 1:
					t.Fatalf("%s: got %d, want exactly one in %s", key, n, line)
				}
				var got map[string]any
				if err := json.Unmarshal([]byte(line), &got); err != nil {
					t.Fatal(err)
				}
				if want != "" && got[key] != want {
					t.Fatalf("%s: got %v, want %q", key, got[key], want)
				}
			}
		})
	}
}
