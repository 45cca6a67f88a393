package config_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/voxgate/voxgate/internal/config"
)

func TestDefaultIsValid(t *testing.T) {
	t.Parallel()
	c := config.Default()
	if err := c.Validate(); err != nil {
		t.Fatalf("default config: %v", err)
	}
	if got := c.Quota.Plans["free"].RequestsPerMinute; got != 3 {
		t.Fatalf("free requests_per_minute: got %d, want 3", got)
	}
}

func TestParseErrorsNameTheKey(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, yaml, want string
	}{
		{"unknown top-level key", "nope: 1\n", "field nope not found"},
		{"unknown nested key", "server:\n  adr: x\n", "field adr not found"},
		{"wrong type", "server:\n  max_body_bytes: lots\n", "max_body_bytes"},
		{"bad duration", "server:\n  shutdown_timeout: soon\n", "soon"},
		{"impossible value", "server:\n  max_body_bytes: -1\n", "server.max_body_bytes"},
		{"bad log level", "log:\n  level: loud\n", "log.level"},
		{"zero pool", "database:\n  max_conns: 0\n", "database.max_conns"},
		{"min above max", "database:\n  max_conns: 2\n  min_conns: 3\n", "database.min_conns"},
		{"bad cors origin", "server:\n  cors_origins: [example.com]\n", "server.cors_origins[0]"},
		{"unknown default plan", "quota:\n  default_plan: gold\n", "quota.default_plan"},
		{"negative limit", "quota:\n  plans:\n    free:\n      requests_per_minute: -1\n", "quota.plans.free.requests_per_minute"},
		{"secret in yaml is not a key", "auth:\n  secret: x\n", "field secret not found"},
		{"drain delay past the shutdown timeout", "server:\n  shutdown_timeout: 5s\n  drain_delay: 5s\n", "server.drain_delay"},
		{"no spool directory", "database:\n  spool_dir: \"\"\n", "database.spool_dir"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := config.Parse([]byte(tc.yaml))
			if err == nil {
				t.Fatalf("got no error, want one mentioning %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %q, want it to mention %q", err, tc.want)
			}
		})
	}
}

func TestLoadFileAndEnvironment(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "voxgate.yaml")
	yaml := "server:\n  addr: \":9000\"\n  shutdown_timeout: 5s\n  cors_origins: [\"https://app.example\"]\nauth:\n  issuer: https://issuer.example\n"
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{
		"VOXGATE_ADDR":         ":9100",
		"VOXGATE_DATABASE_URL": "postgres://x@127.0.0.1/db",
		"VOXGATE_JWT_SECRET":   "s3cret",
		"VOXGATE_AI_ENABLED":   "false",
		"VOXGATE_DRY_RUN":      "true",
	}
	c, err := config.Load(path, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if c.Server.Addr != ":9100" {
		t.Errorf("addr: got %q, want the environment's :9100", c.Server.Addr)
	}
	if c.Server.ShutdownTimeout != 5*time.Second {
		t.Errorf("shutdown_timeout: got %s, want 5s", c.Server.ShutdownTimeout)
	}
	if c.AIEnabled || !c.DryRun {
		t.Errorf("switches: got ai=%v dry=%v, want false, true", c.AIEnabled, c.DryRun)
	}
	if c.Secrets.JWTSecret != "s3cret" || c.Database.URL == "" {
		t.Errorf("secrets from the environment were not read")
	}
	if strings.Contains(c.Secrets.String(), "s3cret") {
		t.Errorf("Secrets.String leaks the secret")
	}
}

func TestBadEnvironment(t *testing.T) {
	t.Parallel()
	_, err := config.Load("", func(k string) string {
		if k == "VOXGATE_AI_ENABLED" {
			return "maybe"
		}
		return ""
	})
	if err == nil || !strings.Contains(err.Error(), "VOXGATE_AI_ENABLED") {
		t.Fatalf("got %v, want an error naming VOXGATE_AI_ENABLED", err)
	}
}

func TestMissingFile(t *testing.T) {
	t.Parallel()
	if _, err := config.Load(filepath.Join(t.TempDir(), "absent.yaml"), nil); err == nil {
		t.Fatal("got no error for a missing file")
	}
}

// FuzzParse: any input is either a valid config or an error; never a panic,
// and never a config that fails its own validation.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"", "server:\n  addr: \":1\"\n", "quota:\n  plans:\n    x: {}\n  default_plan: x\n", "[]", "a: [", "server: 3", "database:\n  max_conns: 99999999999999999999\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := config.Parse(data)
		if err != nil {
			return
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("Parse accepted a config that fails Validate: %v", err)
		}
	})
}
