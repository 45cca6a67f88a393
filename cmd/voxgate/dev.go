package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/voxgate/voxgate/internal/auth"
	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/internal/pglocal"
	"github.com/voxgate/voxgate/sim"
)

// devDir holds everything 'voxgate dev' keeps between runs.
const devDir = ".voxgate"

const devDatabase = "voxgate_dev"

func runDev(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlags("dev", "Runs the gateway with zero setup: a local PostgreSQL (found or started under ./.voxgate/), a dev JWT secret kept in ./.voxgate/, the unlimited 'bench' plan, the demo tools and their tables (VOXGATE_DEMO=false leaves them off), and a printed dev token.", stderr)
	cfgPath := fs.String("config", "", "path to voxgate.yaml (default $VOXGATE_CONFIG)")
	addr := fs.String("addr", "127.0.0.1:8080", "listen address (VOXGATE_ADDR overrides)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := os.MkdirAll(devDir, 0o700); err != nil {
		return err
	}
	secret, err := devSecret(getenv)
	if err != nil {
		return err
	}
	dbURL, err := devDatabaseURL(ctx, getenv, stderr, devDatabase)
	if err != nil {
		return err
	}
	// No OpenAI key: the simulator stands in for every provider, in
	// process, on its own loopback listener.
	simURL := ""
	if getenv("OPENAI_API_KEY") == "" {
		s, err := startSim(ctx, "127.0.0.1:0", sim.Config{Logger: newLogger(stderr)})
		if err != nil {
			return err
		}
		defer s.stop()
		simURL = s.url + "/v1"
	}
	env := func(k string) string {
		switch {
		case k == "VOXGATE_DATABASE_URL":
			return dbURL
		case k == "VOXGATE_JWT_SECRET":
			return secret
		case k == "VOXGATE_ADDR" && getenv(k) == "":
			return *addr
		case k == "OPENAI_BASE_URL" && simURL != "":
			return simURL
		case k == "OPENAI_API_KEY" && simURL != "":
			return "sk-sim"
		case simURL != "" && (k == "ANTHROPIC_BASE_URL" || k == "GOOGLE_GEMINI_BASE_URL"):
			return strings.TrimSuffix(simURL, "/v1") // their SDKs add their own version paths
		case simURL != "" && (k == "ANTHROPIC_API_KEY" || k == "GEMINI_API_KEY"):
			return "sk-sim"
		case k == "VOXGATE_DEMO" && getenv(k) == "":
			return "true" // dev runs the demo unless VOXGATE_DEMO=false
		}
		return getenv(k)
	}
	cfg, err := config.Load(configPath(*cfgPath, getenv), env)
	if err != nil {
		return err
	}
	if cfg.Database.SpoolDir == config.DefaultSpoolDir {
		cfg.Database.SpoolDir = filepath.Join(devDir, "spool") // unless the file names another
	}
	// Relayed calls stay on this machine's loopback: dev is local.
	cfg.Voice.Relay.Loopback = true
	if _, ok := cfg.Quota.Plans["bench"]; !ok {
		cfg.Quota.Plans["bench"] = config.BenchPlan()
	}
	if simURL != "" && len(cfg.Routes) == 0 {
		if rs := devRoutes(cfg); len(rs[0].Targets) > 0 {
			cfg.Routes = rs
		}
	}
	m := &Main{Config: cfg, Logger: newLevelLogger(stderr, cfg.Log.SlogLevel()), Getenv: env}
	if err := m.Run(ctx); err != nil {
		_ = m.Close(ctx)
		return err
	}
	tok, err := auth.Mint(auth.MintParams{Secret: []byte(secret), Subject: "dev-user", Plan: "bench", TTL: 24 * time.Hour})
	if err != nil {
		return err
	}
	// The finance page needs a finance or admin role; dev offers an admin
	// token for it, in the URL's fragment, which never reaches a server log.
	adminTok, err := auth.Mint(auth.MintParams{Secret: []byte(secret), Subject: "dev-admin", Role: auth.RoleAdmin, Plan: "bench", TTL: 24 * time.Hour})
	if err != nil {
		return err
	}
	provider := "OpenAI at " + cfg.Secrets.OpenAIBaseURL
	if simURL != "" {
		provider = "the simulator at " + simURL + " for every provider (no keys needed); route " + cfg.Chat.Route + ": " + routeSummary(cfg)
	}
	fmt.Fprintf(stdout, "\nvoxgate dev is running at %s\nProvider: %s\n\nA dev token (user dev-user, plan bench, valid 24h):\n\n  export TOKEN=%s\n  curl -H \"Authorization: Bearer $TOKEN\" %s/v1/me\n\nIn a browser (each link carries its token after the #):\n\n  demo (chat and voice, as dev-user):  %s/demo#token=%s\n  costs (finance, as dev-admin):       %s/admin#token=%s\n\nMore tokens: go run ./cmd/voxgate token --sub someone --plan pro\nPress Ctrl-C to stop.\n\n", m.URL(), provider, tok, m.URL(), m.URL(), tok, m.URL(), adminTok)
	return serveUntilDone(ctx, m)
}

// devRoutes is the route of a dev file that names none: chat.model on
// OpenAI, then a model of each other kind, all on the simulator, so a
// failover can be watched locally (a fault on one surface moves the turn
// to the next). A provider the file does not define is left out.
func devRoutes(cfg *config.Config) []config.Route {
	defined := map[string]bool{}
	for _, p := range cfg.Providers {
		defined[p.Name] = true
	}
	var targets []config.RouteTarget
	for _, t := range []config.RouteTarget{
		{Provider: config.KindOpenAI, Model: cfg.Chat.Model},
		{Provider: config.KindAnthropic, Model: "claude-haiku-5-5", MaxTokens: 1024},
		{Provider: config.KindGemini, Model: "gemini-3.8-flash"},
	} {
		if defined[t.Provider] {
			targets = append(targets, t)
		}
	}
	return []config.Route{{Name: cfg.Chat.Route, Targets: targets}}
}

// routeSummary lists chat.route's targets as "<provider>/<model>, …".
func routeSummary(cfg *config.Config) string {
	var out []string
	for _, rt := range cfg.RouteList() {
		if rt.Name == cfg.Chat.Route {
			for _, t := range rt.Targets {
				out = append(out, t.Provider+"/"+t.Model)
			}
		}
	}
	return strings.Join(out, ", ")
}

// devSecret is VOXGATE_JWT_SECRET, else a secret generated once and kept in
// ./.voxgate/jwt-secret with mode 0600.
func devSecret(getenv func(string) string) (string, error) {
	if s := getenv("VOXGATE_JWT_SECRET"); s != "" {
		return s, nil
	}
	path := filepath.Join(devDir, "jwt-secret")
	if b, err := os.ReadFile(path); err == nil {
		return strings.TrimSpace(string(b)), nil
	}
	s, err := auth.NewSecret()
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(path, []byte(s+"\n"), 0o600); err != nil {
		return "", err
	}
	return s, nil
}

// devDatabaseURL is VOXGATE_DATABASE_URL, else database name on a server
// at localhost:5432, else on a private cluster under ./.voxgate/.
func devDatabaseURL(ctx context.Context, getenv func(string) string, stderr io.Writer, name string) (string, error) {
	if u := getenv("VOXGATE_DATABASE_URL"); u != "" {
		return u, nil
	}
	admin := pglocal.FindLocal(ctx)
	if admin != "" {
		fmt.Fprintln(stderr, "voxgate dev: using the PostgreSQL server on localhost:5432")
	} else {
		fmt.Fprintln(stderr, "voxgate dev: no PostgreSQL on localhost:5432; starting a private one under ./.voxgate/pg (first start takes a few seconds)")
		abs, err := filepath.Abs(filepath.Join(devDir, "pg"))
		if err != nil {
			return "", err
		}
		c, err := pglocal.Start(ctx, abs)
		if err != nil {
			return "", err
		}
		admin = c.URL
	}
	return ensureDatabase(ctx, admin, name)
}

// ensureDatabase creates database name on the server at admin if missing and
// returns its URL.
func ensureDatabase(ctx context.Context, admin, name string) (string, error) {
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		return "", fmt.Errorf("dev database: %w", err)
	}
	defer conn.Close(ctx)
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists); err != nil {
		return "", err
	}
	if !exists {
		if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
			return "", fmt.Errorf("dev database: %w", err)
		}
	}
	return pglocal.WithDatabase(admin, name), nil
}
