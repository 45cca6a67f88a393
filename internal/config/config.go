// Package config loads voxgate's configuration: one YAML file for settings
// and the environment for secrets and overrides (DESIGN §3). Every setting
// has a default that works; unknown keys and impossible values are errors
// that name the key.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Config is the whole configuration. It is built once in main and passed
// down by value or pointer; nothing reads it from a global.
type Config struct {
	Server   Server   `yaml:"server"`
	Log      Log      `yaml:"log"`
	Database Database `yaml:"database"`
	Auth     Auth     `yaml:"auth"`
	Quota    Quota    `yaml:"quota"`
	Tools    Tools    `yaml:"tools"`
	Demo     Demo     `yaml:"demo"`
	Voice    Voice    `yaml:"voice"`
	Chat     Chat     `yaml:"chat"`
	Safety   Safety   `yaml:"safety"`
	Prices   Prices   `yaml:"prices"`
	Ledger   Ledger   `yaml:"ledger"`
	// Providers and Routes are the text router's (DESIGN §11, routes.go);
	// read the routes through RouteList, which supplies the default.
	Providers []Provider `yaml:"providers"`
	Routes    []Route    `yaml:"routes"`

	// AIEnabled is the kill switch (VOXGATE_AI_ENABLED); false makes every AI
	// route answer 503 AI_FEATURE_DISABLED.
	AIEnabled bool `yaml:"-"`
	// DryRun (VOXGATE_DRY_RUN) turns every write into a proposal.
	DryRun bool `yaml:"-"`
	// Secrets holds values that only ever come from the environment.
	Secrets Secrets `yaml:"-"`
}

// Server is the HTTP listener.
type Server struct {
	Addr            string        `yaml:"addr"`
	MetricsAddr     string        `yaml:"metrics_addr"` // "" serves /metrics on Addr
	CORSOrigins     []string      `yaml:"cors_origins"`
	MaxBodyBytes    int64         `yaml:"max_body_bytes"`
	ShutdownTimeout time.Duration `yaml:"shutdown_timeout"`
	// DrainDelay is how long /readyz answers 503 after SIGTERM while the
	// replica still serves, so load balancers stop routing to it before it
	// stops accepting connections.
	DrainDelay  time.Duration `yaml:"drain_delay"`
	ReadTimeout time.Duration `yaml:"read_header_timeout"`
	// ReadBodyTimeout bounds the time from a request's start until its body
	// has been read, so a client that promises a body and stalls cannot hold
	// a connection.
	ReadBodyTimeout time.Duration `yaml:"read_body_timeout"`
	// RequestTimeout is the deadline of every non-streaming route's work
	// (database calls included); streaming routes opt out.
	RequestTimeout time.Duration `yaml:"request_timeout"`
}

// Log configures the JSON log on stderr.
type Log struct {
	// Level is debug, info, warn or error (VOXGATE_LOG_LEVEL overrides).
	Level string `yaml:"level"`
}

// SlogLevel is Level as a slog level; Validate has checked it.
func (l Log) SlogLevel() slog.Level {
	var lv slog.Level
	_ = lv.UnmarshalText([]byte(l.Level))
	return lv
}

// Database is the PostgreSQL pool.
type Database struct {
	URL      string `yaml:"-"` // VOXGATE_DATABASE_URL; may hold a password
	MaxConns int32  `yaml:"max_conns"`
	MinConns int32  `yaml:"min_conns"`
	// SpoolDir keeps the usage records and settlements the database did
	// not take during an outage until it does (package spool). It must
	// be writable at startup and should be a persistent volume.
	SpoolDir string `yaml:"spool_dir"`
	// ReadURL (VOXGATE_DATABASE_READ_URL overrides) is an optional server
	// for finance's reads only, a streaming standby as a rule; empty reads
	// the primary. Nothing that must be exact now uses it (readurl.go).
	ReadURL string `yaml:"read_url"`
}

// DefaultSpoolDir is database.spool_dir's default for serve; the
// Dockerfile creates it for the image's user.
const DefaultSpoolDir = "/var/lib/voxgate/spool"

// Demo switches the demo domain (DESIGN §1): its tools and its tables, in
// schema demo. Off by default; `voxgate dev` turns it on.
type Demo struct {
	// Enabled (VOXGATE_DEMO overrides) applies the demo's migrations and
	// registers its tools.
	Enabled bool `yaml:"enabled"`
}

// Auth configures JWT verification (DESIGN §4).
type Auth struct {
	Issuer   string `yaml:"issuer"`
	Audience string `yaml:"audience"`
	// JWKSURL is the key set for RS256/ES256 tokens (VOXGATE_JWKS_URL
	// overrides). It is a URL, not a secret, so the file may hold it too.
	JWKSURL string `yaml:"jwks_url"`
	// CacheSize bounds the verified-token cache; 0 turns it off.
	CacheSize int `yaml:"cache_size"`
}

// Secrets come only from the environment and are never logged.
type Secrets struct {
	JWTSecret       string
	OpenAIAPIKey    string
	OpenAIBaseURL   string
	AnthropicAPIKey string
	GeminiAPIKey    string
	// SafetyIDKey keys the salted user hash providers see as a safety
	// identifier (VOXGATE_SAFETY_ID_KEY); see SafetyKey.
	SafetyIDKey string
	// TURNCredential is the credential of voice.relay.turn's servers
	// (VOXGATE_TURN_CREDENTIAL): phones get it with a relayed session.
	TURNCredential string
}

// SafetyKey is the key of the users' safety identifiers: VOXGATE_SAFETY_ID_KEY,
// else the JWT secret (the identifier's own domain string keeps the two
// uses apart); nil with neither, and then no identifier is sent. Changing
// it changes every user's identifier.
func (s Secrets) SafetyKey() []byte {
	if s.SafetyIDKey != "" {
		return []byte(s.SafetyIDKey)
	}
	if s.JWTSecret != "" {
		return []byte(s.JWTSecret)
	}
	return nil
}

// String hides every secret so a Config can be logged safely.
func (Secrets) String() string { return "[secrets hidden]" }

// Default is the configuration used when no file is given.
func Default() Config {
	return Config{
		Server: Server{
			Addr:            ":8080",
			MaxBodyBytes:    1 << 20,
			ShutdownTimeout: 25 * time.Second,
			ReadTimeout:     10 * time.Second,
			ReadBodyTimeout: 30 * time.Second,
			RequestTimeout:  10 * time.Second,
		},
		Log:       Log{Level: "info"},
		Database:  Database{MaxConns: 20, MinConns: 0, SpoolDir: DefaultSpoolDir},
		Auth:      Auth{CacheSize: 10000},
		Quota:     DefaultQuota(),
		Tools:     DefaultTools(),
		Voice:     DefaultVoice(),
		Chat:      DefaultChat(),
		Providers: DefaultProviders(),
		AIEnabled: true,
	}
}

// Load reads the YAML file at path (none when path is ""), then applies the
// environment through getenv, then validates.
func Load(path string, getenv func(string) string) (*Config, error) {
	cfg := Default()
	if path != "" {
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("config: %w", err)
		}
		defer f.Close()
		if err := decode(f, &cfg); err != nil {
			return nil, fmt.Errorf("config %s: %w", path, err)
		}
		if err := cfg.Database.readURLHasNoSecret(); err != nil {
			return nil, fmt.Errorf("config %s: %w", path, err)
		}
	}

	if err := applyEnv(&cfg, getenv); err != nil {
		return nil, err
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &cfg, nil
}

// Parse is Load for YAML held in memory, without the environment.
func Parse(data []byte) (*Config, error) {
	cfg := Default()
	if err := decode(bytes.NewReader(data), &cfg); err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	if err := cfg.Database.readURLHasNoSecret(); err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}

	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &cfg, nil
}

func decode(r io.Reader, cfg *Config) error {
	data, err := io.ReadAll(io.LimitReader(r, 4<<20))
	if err != nil {
		return err
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(cfg); err != nil && !errors.Is(err, io.EOF) {
		return nameKeys(data, err)
	}
	return nil
}

func applyEnv(cfg *Config, getenv func(string) string) error {
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	if v := getenv("VOXGATE_ADDR"); v != "" {
		cfg.Server.Addr = v
	}
	if v := getenv("VOXGATE_LOG_LEVEL"); v != "" {
		cfg.Log.Level = v
	}
	if v := getenv("VOXGATE_JWKS_URL"); v != "" {
		cfg.Auth.JWKSURL = v
	}
	cfg.Database.URL = getenv("VOXGATE_DATABASE_URL")
	if v := getenv("VOXGATE_DATABASE_READ_URL"); v != "" {
		cfg.Database.ReadURL = v
	}
	cfg.Secrets = Secrets{
		JWTSecret:       getenv("VOXGATE_JWT_SECRET"),
		OpenAIAPIKey:    getenv("OPENAI_API_KEY"),
		OpenAIBaseURL:   getenv("OPENAI_BASE_URL"),
		AnthropicAPIKey: getenv("ANTHROPIC_API_KEY"),
		GeminiAPIKey:    getenv("GEMINI_API_KEY"),
		SafetyIDKey:     getenv("VOXGATE_SAFETY_ID_KEY"),
		TURNCredential:  getenv("VOXGATE_TURN_CREDENTIAL"),
	}
	var err error
	if cfg.AIEnabled, err = envBool(getenv, "VOXGATE_AI_ENABLED", true); err != nil {
		return err
	}
	if cfg.DryRun, err = envBool(getenv, "VOXGATE_DRY_RUN", false); err != nil {
		return err
	}
	if cfg.Demo.Enabled, err = envBool(getenv, "VOXGATE_DEMO", cfg.Demo.Enabled); err != nil {
		return err
	}
	return nil
}

func envBool(getenv func(string) string, key string, def bool) (bool, error) {
	v := strings.TrimSpace(getenv(key))
	if v == "" {
		return def, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return def, fmt.Errorf("config: environment %s=%q: want true or false", key, v)
	}
	return b, nil
}

// Validate checks values a YAML decoder cannot: ranges and consistency.
func (c *Config) Validate() error {
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("config: %s: %s", key, fmt.Sprintf(format, args...)))
	}
	if c.Server.Addr == "" {
		bad("server.addr", "must not be empty")
	}
	if c.Server.MaxBodyBytes <= 0 || c.Server.MaxBodyBytes > 64<<20 {
		bad("server.max_body_bytes", "must be between 1 and 67108864, got %d", c.Server.MaxBodyBytes)
	}
	if c.Server.ShutdownTimeout <= 0 {
		bad("server.shutdown_timeout", "must be positive, got %s", c.Server.ShutdownTimeout)
	}
	if c.Server.DrainDelay < 0 || c.Server.DrainDelay > 5*time.Minute {
		bad("server.drain_delay", "must be between 0s and 5m, got %s", c.Server.DrainDelay)
	}
	// The drain delay is part of the shutdown timeout: everything after
	// SIGTERM fits in shutdown_timeout + 2s (DESIGN §13).
	if c.Server.ShutdownTimeout > 0 && c.Server.DrainDelay >= c.Server.ShutdownTimeout {
		bad("server.drain_delay", "must be shorter than server.shutdown_timeout (%s), which it is part of, got %s",
			c.Server.ShutdownTimeout, c.Server.DrainDelay)
	}
	if c.Database.SpoolDir == "" {
		bad("database.spool_dir", "must not be empty")
	}
	c.Ledger.validate(bad)
	if c.Server.ReadTimeout <= 0 {
		bad("server.read_header_timeout", "must be positive, got %s", c.Server.ReadTimeout)
	}
	if c.Server.ReadBodyTimeout <= 0 {
		bad("server.read_body_timeout", "must be positive, got %s", c.Server.ReadBodyTimeout)
	}
	if c.Server.RequestTimeout <= 0 {
		bad("server.request_timeout", "must be positive, got %s", c.Server.RequestTimeout)
	}
	for i, o := range c.Server.CORSOrigins {
		if o != "*" && !strings.HasPrefix(o, "http://") && !strings.HasPrefix(o, "https://") {
			bad(fmt.Sprintf("server.cors_origins[%d]", i), "%q must be \"*\" or start with http:// or https://", o)
		}
	}
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(c.Log.Level)); err != nil {
		bad("log.level", "must be debug, info, warn or error, got %q", c.Log.Level)
	}
	if c.Database.MaxConns < 1 || c.Database.MaxConns > 1000 {
		bad("database.max_conns", "must be between 1 and 1000, got %d", c.Database.MaxConns)
	}
	if c.Database.MinConns < 0 || c.Database.MinConns > c.Database.MaxConns {
		bad("database.min_conns", "must be between 0 and max_conns (%d), got %d", c.Database.MaxConns, c.Database.MinConns)
	}
	if err := c.Database.validateReadURL(); err != nil {
		errs = append(errs, err)
	}
	if c.Auth.CacheSize < 0 {
		bad("auth.cache_size", "must not be negative, got %d", c.Auth.CacheSize)
	}
	if u := c.Auth.JWKSURL; u != "" && !secureKeySetURL(u) {
		bad("auth.jwks_url", "must be an https URL (plain http only on loopback): whoever can swap the key set can forge tokens")
	}
	errs = append(errs, c.Quota.validate()...)
	errs = append(errs, c.Quota.fitEstimate(c.Chat.EstimateTokens)...)
	errs = append(errs, c.validateRouting()...)
	return errors.Join(errs...)
}

// secureKeySetURL reports whether u is https, or http to a loopback host
// (127.0.0.0/8, ::1, localhost), where no one on the network can swap the
// keys in transit.
func secureKeySetURL(u string) bool {
	p, err := url.Parse(u)
	if err != nil || p.Host == "" {
		return false
	}
	switch p.Scheme {
	case "https":
		return true
	case "http":
		host := p.Hostname()
		if strings.EqualFold(host, "localhost") {
			return true
		}
		ip := net.ParseIP(host)
		return ip != nil && ip.IsLoopback()
	}
	return false
}
