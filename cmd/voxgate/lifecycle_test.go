package main

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/internal/logbuf"
	"github.com/voxgate/voxgate/internal/pgtest"
	"github.com/voxgate/voxgate/lifecycle"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// runMain runs a Main on :0 with its clock at noon UTC of today, against a
// simulator with OpenAI's announced shutdown dates; it returns Run's
// error, the logs and the Main (closed at cleanup).
func runMain(t *testing.T, today string, mutate func(*config.Config)) (*Main, *logbuf.Buffer, error) {
	t.Helper()
	return runMainEnv(t, today, nil, mutate)
}

// runMainEnv is runMain with environment variables for the providers'
// keys and base URLs beside OpenAI's.
func runMainEnv(t *testing.T, today string, extra map[string]string, mutate func(*config.Config)) (*Main, *logbuf.Buffer, error) {
	t.Helper()
	_, ts := simtest.NewServer(t, sim.Config{Latency: simtest.ZeroLatency(), ShutdownDates: sim.DefaultShutdownDates()})
	env := map[string]string{"VOXGATE_DATABASE_URL": pgtest.URL(t), "VOXGATE_JWT_SECRET": testSecret, "VOXGATE_ADDR": "127.0.0.1:0"}
	cfg, err := config.Load("", func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	cfg.Database.MaxConns = 2
	cfg.Secrets.OpenAIAPIKey, cfg.Secrets.OpenAIBaseURL = simtest.TestKey, ts.URL+"/v1"
	if mutate != nil {
		mutate(cfg)
	}
	day, err := time.Parse(time.DateOnly, today)
	if err != nil {
		t.Fatal(err)
	}
	logs := &logbuf.Buffer{}
	m := &Main{Config: cfg, Logger: newLogger(logs), Now: func() time.Time { return day.Add(12 * time.Hour) },
		Getenv: func(k string) string { return extra[k] }}
	err = m.Run(context.Background())
	t.Cleanup(func() { _ = m.Close(context.Background()) })
	return m, logs, err
}

// Startup warns for a configured model within 30 days of its shutdown date
// (naming the model, the date and the replacement, and showing the days
// left in /metrics), and refuses one past it with that message.
func TestStartupModelLifecycle(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		today   string
		set     func(*config.Config)
		refused string // a substring of Run's error; "" means it starts
		warned  string // a substring of a WARN line; "" means none
		metric  string // a line of /metrics; "" means no check
	}{
		{"the defaults on the day", "2026-11-24", nil, "", "", ""},
		{"a chat model 17 days from its date", "2026-11-24", func(c *config.Config) { c.Chat.Model = "gpt-5-mini" }, "",
			"chat.model gpt-5-mini shuts down on 2026-12-11; replace it with gpt-6.1-terra",
			`voxgate_model_shutdown_days_left{key="chat.model",model="gpt-5-mini"} 17`},
		{"a route target past its date", "2026-12-12", func(c *config.Config) {
			c.Routes = []config.Route{{Name: "default", Targets: []config.RouteTarget{
				{Provider: "openai", Model: "gpt-6-luna"}, {Provider: "openai", Model: "gpt-5-mini"}}}}
		}, "routes[0].targets[1].model gpt-5-mini was shut down on 2026-12-11", "", ""},
		// OpenAI's list does not speak for another vendor's model: no
		// "not in the provider's list" warning for it.
		{"a Gemini target is not looked up at OpenAI", "2026-11-24", func(c *config.Config) {
			c.Routes = []config.Route{{Name: "default", Targets: []config.RouteTarget{
				{Provider: "openai", Model: "gpt-6-luna"}, {Provider: "gemini", Model: "gemini-3.8-flash"}}}}
		}, "", "", ""},
		{"a voice model past its date", "2027-01-21", func(c *config.Config) { c.Voice.Model = "gpt-realtime" },
			"voice.model gpt-realtime was shut down on 2027-01-20; replace it with gpt-realtime-2.1", "", ""},
		{"a transcription model on its date", "2027-02-26", func(c *config.Config) { c.Voice.TranscriptionModel = "whisper-1" },
			"voice.transcription_model whisper-1 was shut down on 2027-02-26", "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m, logs, err := runMain(t, tc.today, tc.set)
			if err != nil && tc.refused == "" {
				t.Fatalf("Run: %v", err)
			}
			if tc.refused != "" {
				if !errors.Is(err, lifecycle.ErrRetired) || !strings.Contains(err.Error(), tc.refused) {
					t.Fatalf("Run: got %v, want a refusal saying %q", err, tc.refused)
				}
				return
			}
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			warned := false
			for _, line := range strings.Split(logs.String(), "\n") {
				if strings.Contains(line, `"level":"WARN"`) && strings.Contains(line, "model lifecycle") {
					warned = warned || (tc.warned != "" && strings.Contains(line, tc.warned))
					if tc.warned == "" {
						t.Errorf("unexpected lifecycle warning: %s", line)
					}
				}
			}
			if tc.warned != "" && !warned {
				t.Errorf("no warning saying %q in %s", tc.warned, logs)
			}
			if tc.metric != "" {
				if status, body := get(t, m.URL()+"/metrics", ""); status != 200 || !strings.Contains(body, tc.metric) {
					t.Errorf("/metrics: %d, want a line %q", status, tc.metric)
				}
			}
		})
	}
}

// Every route target's model needs a price: startup names the one
// without.
func TestStartupRouteTargetNeedsPrice(t *testing.T) {
	t.Parallel()
	_, _, err := runMain(t, "2026-11-24", func(c *config.Config) {
		c.Routes = []config.Route{{Name: "default", Targets: []config.RouteTarget{
			{Provider: "openai", Model: "gpt-6-luna"}, {Provider: "gemini", Model: "gemini-9-unpriced"}}}}
	})
	if err == nil || !strings.Contains(err.Error(), "routes[0].targets[1].model") || !strings.Contains(err.Error(), `"gemini-9-unpriced" has no price`) {
		t.Fatalf("Run: got %v, want a refusal naming routes[0].targets[1].model and its missing price", err)
	}
}

// Anthropic and Gemini publish no models list the gateway reads: the
// embedded table speaks for their targets, with or without an OpenAI key.
func TestStartupOtherVendorsLifecycle(t *testing.T) {
	t.Parallel()
	keys := map[string]string{"ANTHROPIC_API_KEY": "sk-a", "ANTHROPIC_BASE_URL": "http://127.0.0.1:9",
		"GEMINI_API_KEY": "g-k", "GOOGLE_GEMINI_BASE_URL": "http://127.0.0.1:9"}
	route := func(model string) func(*config.Config) {
		return func(c *config.Config) {
			c.Providers = []config.Provider{{Name: "openai", Kind: config.KindOpenAI},
				{Name: "claude", Kind: config.KindAnthropic}, {Name: "gemini", Kind: config.KindGemini}}
			c.Routes = []config.Route{{Name: "default", Targets: []config.RouteTarget{
				{Provider: "openai", Model: "gpt-6-luna"}, {Provider: "claude", Model: model}}}}
		}
	}
	_, _, err := runMainEnv(t, "2026-12-01", keys, route("claude-sonnet-4-5"))
	if !errors.Is(err, lifecycle.ErrRetired) || !strings.Contains(err.Error(),
		"routes[0].targets[1].model claude-sonnet-4-5 was shut down on 2026-11-30; replace it with claude-sonnet-5-5") {
		t.Fatalf("Run: got %v, want the retired Anthropic target refused", err)
	}
	_, logs, err := runMainEnv(t, "2026-11-24", keys, route("claude-sonnet-4-5"))
	if err != nil {
		t.Fatalf("Run six days before the date: %v", err)
	}
	if !strings.Contains(logs.String(), "claude-sonnet-4-5 shuts down on 2026-11-30") || strings.Contains(logs.String(), "not in the provider's list") {
		t.Fatalf("logs: want the shutdown warning and no models-list warning for an Anthropic target:\n%s", logs)
	}
}
