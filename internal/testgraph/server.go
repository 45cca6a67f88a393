package testgraph

import (
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/voxgate/voxgate/internal/auth"
	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/internal/server"
	"github.com/voxgate/voxgate/internal/testkit"
)

// serverSecret signs the tokens of Server's callers.
var serverSecret = []byte("testgraph-server-secret-32-bytes")

// Server is the gateway's own server (request ids, metrics, panics, CORS,
// body limits, JWT auth) over pool, with no routes yet: a test mounts the
// routes it drives, as cmd/voxgate mounts them, when what it measures
// depends on how deep a handler runs. Callers sign in with Token.
func Server(t testing.TB, pool *pgxpool.Pool) *server.Server {
	t.Helper()
	env := map[string]string{"VOXGATE_DATABASE_URL": "postgres://unused", "VOXGATE_JWT_SECRET": string(serverSecret)}
	cfg, err := config.Load("", func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	v, err := auth.NewVerifier(auth.Params{Secret: serverSecret})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.Params{Config: cfg, Pool: pool, Verifier: v, Registry: prometheus.NewRegistry(), Logger: testkit.Quiet()})
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

// Token signs in a caller of Server as user on plan, for an hour.
func Token(t testing.TB, user, plan string) string {
	t.Helper()
	tok, err := auth.Mint(auth.MintParams{Secret: serverSecret, Subject: user, Plan: plan, TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	return tok
}
