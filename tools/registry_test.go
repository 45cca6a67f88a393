package tools

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/voxgate/voxgate/internal/auth"
	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/internal/pgtest"
)

func withSchema(name, schema string) *Tool {
	t := echoTool(name)
	t.Parameters = json.RawMessage(schema)
	return t
}

func hook(name string) config.WebhookTool {
	return config.WebhookTool{Name: name, Description: "A webhook.", URL: "https://example.test/hook",
		SecretEnv: "HOOK_SECRET", Parameters: map[string]any{"type": "object"}}
}

func env(k string) string {
	if k == "HOOK_SECRET" {
		return "0123456789abcdef0123"
	}
	return ""
}

func TestRegistryRefusesInvalidDefinitions(t *testing.T) {
	t.Parallel()
	standardVoice := echoTool("v")
	standardVoice.Tier = TierStandard
	plansTypo := echoTool("p")
	plansTypo.Plans = []string{"prro"}
	shortSecret := hook("short")
	shortSecret.SecretEnv = "SHORT"
	noSecret := hook("nosecret")
	noSecret.SecretEnv = "MISSING"
	voiceHook := hook("vh")
	voiceHook.Voice, voiceHook.Tier = true, "elevated"
	badHookSchema := hook("badhook")
	badHookSchema.Parameters = map[string]any{"type": "object", "properties": map[string]any{"x": map[string]any{"type": 7}}}
	userHook := hook("userhook")
	userHook.Parameters = map[string]any{"type": "object", "properties": map[string]any{"user_id": map[string]any{"type": "string"}}}
	badTier := echoTool("t")
	badTier.Tier = "high"

	cases := []struct {
		name string
		p    RegistryParams
		want string
	}{
		{"bad schema type", RegistryParams{Builtins: []*Tool{withSchema("a", `{"type":"object","properties":{"x":{"type":"strng"}}}`)}}, `tool "a": parameters: not a valid JSON Schema`},
		{"schema not JSON", RegistryParams{Builtins: []*Tool{withSchema("a", `{"type":`)}}, `tool "a"`},
		{"parameters not an object", RegistryParams{Builtins: []*Tool{withSchema("a", `{"type":"string"}`)}}, `"type": "object"`},
		{"external ref", RegistryParams{Builtins: []*Tool{withSchema("a", `{"type":"object","properties":{"x":{"$ref":"https://example.test/s.json"}}}`)}}, `tool "a"`},
		{"duplicate built-in", RegistryParams{Builtins: []*Tool{echoTool("a"), echoTool("a")}}, `tool "a": name: "a" is the name of another tool too`},
		{"built-in and webhook share a name", RegistryParams{Builtins: []*Tool{echoTool("hook")},
			Config: config.Tools{Webhooks: []config.WebhookTool{hook("hook")}}, Getenv: env}, `tools.webhooks[0] (hook).name: "hook" is the name of another tool too`},
		{"voice with tier standard", RegistryParams{Builtins: []*Tool{standardVoice}}, `tool "v": voice: true needs tier none`},
		{"voice webhook with tier elevated", RegistryParams{Config: config.Tools{Webhooks: []config.WebhookTool{voiceHook}}, Getenv: env}, `tools.webhooks[0] (vh).voice: true needs tier none`},
		{"user_id parameter", RegistryParams{Builtins: []*Tool{withSchema("a", `{"type":"object","properties":{"user_id":{"type":"string"}}}`)}}, `parameters.properties.user_id: the user's id is never a tool parameter`},
		{"userId parameter", RegistryParams{Builtins: []*Tool{withSchema("a", `{"type":"object","properties":{"userId":{"type":"string"}}}`)}}, `userId`},
		{"nested user_id parameter", RegistryParams{Builtins: []*Tool{withSchema("a", `{"type":"object","properties":{"filter":{"type":"object","properties":{"User-ID":{"type":"string"}}}}}`)}}, `User-ID`},
		{"webhook user_id parameter", RegistryParams{Config: config.Tools{Webhooks: []config.WebhookTool{userHook}}, Getenv: env}, `tools.webhooks[0] (userhook).parameters.properties.user_id: the user's id`},
		{"webhook bad schema", RegistryParams{Config: config.Tools{Webhooks: []config.WebhookTool{badHookSchema}}, Getenv: env}, `tools.webhooks[0] (badhook).parameters: not a valid JSON Schema`},
		{"unknown plan", RegistryParams{Builtins: []*Tool{plansTypo}}, `"prro" is not a configured plan`},
		{"bad tier", RegistryParams{Builtins: []*Tool{badTier}}, `tool "t": tier: "high" must be`},
		{"bad name", RegistryParams{Builtins: []*Tool{echoTool("has space")}}, `tool "has space": name: "has space" must be 1–64`},
		{"missing secret", RegistryParams{Config: config.Tools{Webhooks: []config.WebhookTool{noSecret}}, Getenv: env}, `tools.webhooks[0] (nosecret).secret_env: MISSING is not set`},
		{"short secret", RegistryParams{Config: config.Tools{Webhooks: []config.WebhookTool{shortSecret}},
			Getenv: func(k string) string { return "short" }}, `shorter than 16 bytes`},
		{"override of unknown built-in", RegistryParams{Builtins: []*Tool{echoTool("a")},
			Config: config.Tools{Builtins: map[string]config.BuiltinTool{"b": {}}}}, `tools.builtins.b: names a tool that is not built in`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if c.p.Plans == nil {
				c.p.Plans = testPlans
			}
			_, err := NewRegistry(c.p)
			if err == nil {
				t.Fatalf("got no error, want one containing %q", c.want)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %q, want it to contain %q", err, c.want)
			}
		})
	}
}

// TestConfigRulesNameTheKey: config only decodes tool entries; the
// registry refuses a bad one at startup and names the key to fix.
func TestConfigRulesNameTheKey(t *testing.T) {
	t.Parallel()
	hook := "tools:\n  webhooks:\n    - name: w\n      description: d\n      secret_env: HOOK_SECRET\n      parameters: {type: object}\n"
	cases := []struct{ name, yaml, want string }{
		{"url without scheme", hook + "      url: example.test/x\n", "tools.webhooks[0] (w).url: must be an absolute http(s) URL"},
		{"url with credentials", hook + "      url: https://a:b@example.test/x\n", "tools.webhooks[0] (w).url: must not carry credentials"},
		{"webhook timeout too long", hook + "      url: https://example.test/w\n      timeout: 2m\n", "tools.webhooks[0] (w).timeout: must be more than 0 and at most 1m0s"},
		{"webhook negative timeout", hook + "      url: https://example.test/w\n      timeout: -1s\n", "tools.webhooks[0] (w).timeout:"},
		{"max_tokens too small", hook + "      url: https://example.test/w\n      max_tokens: 8\n", "tools.webhooks[0] (w).max_tokens: must be between 32 and 16000"},
		{"bad safety level", hook + "      url: https://example.test/w\n      safety_level: unsafe\n", "tools.webhooks[0] (w).safety_level:"},
		{"bad tier", hook + "      url: https://example.test/w\n      tier: high\n", "tools.webhooks[0] (w).tier:"},
		{"voice with tier", hook + "      url: https://example.test/w\n      voice: true\n      tier: standard\n", "tools.webhooks[0] (w).voice: true needs tier none"},
		{"response cap", hook + "      url: https://example.test/w\n      max_response_bytes: 9999999999\n", "tools.webhooks[0] (w).max_response_bytes:"},
		{"secret_env not a name", strings.Replace(hook, "HOOK_SECRET", "HOOK-SECRET", 1) + "      url: https://example.test/w\n", "tools.webhooks[0] (w).secret_env: must name"},
		{"bad webhook name", strings.Replace(hook, "name: w", "name: 'w w'", 1) + "      url: https://example.test/w\n", "tools.webhooks[0] (w w).name:"},
		{"no description", strings.Replace(hook, "description: d", "description: ''", 1) + "      url: https://example.test/w\n", "tools.webhooks[0] (w).description: is required"},
		{"built-in timeout too long", "tools:\n  builtins:\n    echo: {timeout: 90s}\n", "tools.builtins.echo.timeout: must be more than 0 and at most 1m0s"},
		{"built-in max_tokens too large", "tools:\n  builtins:\n    echo: {max_tokens: 20000}\n", "tools.builtins.echo.max_tokens:"},
		{"built-in unknown plan", "tools:\n  builtins:\n    echo: {plans: [gold]}\n", `tools.builtins.echo.plans: "gold" is not a configured plan`},
		{"voice on a standard built-in", "tools:\n  builtins:\n    write: {voice: true}\n", "tools.builtins.write.voice: true needs tier none, not standard"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			cfg, err := config.Parse([]byte(c.yaml))
			if err != nil {
				t.Fatalf("config.Parse: %v (config only decodes tool entries)", err)
			}
			write := echoTool("write")
			write.Voice, write.Tier = false, TierStandard
			_, err = NewRegistry(RegistryParams{Builtins: []*Tool{echoTool("echo"), write}, Config: cfg.Tools, Plans: testPlans, Getenv: env})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want %q", err, c.want)
			}
		})
	}
}

func TestRegistryDefaultsAndOverrides(t *testing.T) {
	t.Parallel()
	off, on := false, true
	quiet := echoTool("d")
	quiet.Voice = false
	r := mustRegistry(t, RegistryParams{
		Builtins: []*Tool{echoTool("a"), echoTool("b"), echoTool("c"), quiet},
		Config: config.Tools{Builtins: map[string]config.BuiltinTool{
			"b": {Disabled: true},
			"c": {Voice: &off, Plans: []string{"pro"}, MaxTokens: 100},
			"d": {Voice: &on, Timeout: 2 * time.Second}, // no tier: tier none, so voice is allowed
		}},
	})
	if d, _ := r.Lookup("d"); !d.Voice || d.Timeout != 2*time.Second || d.Tier != TierNone {
		t.Fatalf("override of a built-in without a tier: got voice %v timeout %s tier %s", d.Voice, d.Timeout, d.Tier)
	}
	if got, want := strings.Join(r.Names(), ","), "a,c,d"; got != want {
		t.Fatalf("names: got %s, want %s", got, want)
	}
	a, _ := r.Lookup("a")
	if a.Timeout != DefaultTimeout || a.MaxTokens != DefaultMaxTokens || a.Tier != TierNone || a.SafetyLevel != SafetySafe {
		t.Fatalf("defaults: got timeout %s max_tokens %d tier %s safety %s", a.Timeout, a.MaxTokens, a.Tier, a.SafetyLevel)
	}
	c, _ := r.Lookup("c")
	if c.Voice || c.MaxTokens != 100 || !c.AllowsPlan("pro") || c.AllowsPlan("free") {
		t.Fatalf("override: got voice %v max_tokens %d", c.Voice, c.MaxTokens)
	}
}

func TestListToolsPerPlan(t *testing.T) {
	t.Parallel()
	proOnly := echoTool("pro_tool")
	proOnly.Plans = []string{"pro"}
	chatOnly := echoTool("chat_tool")
	chatOnly.Voice = false
	chatOnly.Tier = TierStandard
	reg := mustRegistry(t, RegistryParams{Builtins: []*Tool{echoTool("everyone"), proOnly, chatOnly}})
	e := mustExecutor(t, pgtest.Pool(t), reg)

	cases := []struct {
		name   string
		plan   string
		query  string
		status int
		want   string
	}{
		{"free", "", "", 200, "chat_tool,everyone"},
		{"pro", "pro", "", 200, "chat_tool,everyone,pro_tool"},
		{"free voice", "", "?voice=true", 200, "everyone"},
		{"pro voice", "pro", "?voice=true", 200, "everyone,pro_tool"},
		{"voice=false lists all", "pro", "?voice=false", 200, "chat_tool,everyone,pro_tool"},
		{"bad voice", "", "?voice=maybe", 400, ""},
		{"empty voice", "", "?voice=", 400, ""},
		{"voice after a raw semicolon", "", "?x=1;voice=true", 400, ""},
		{"repeated voice", "", "?voice=true&voice=false", 400, ""},
		{"unknown parameter", "", "?voice=true&plan=pro", 400, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			req := httptest.NewRequest(http.MethodGet, "/v1/tools"+c.query, nil)
			req = req.WithContext(auth.WithPrincipal(context.Background(), auth.Principal{UserID: "u1", Plan: c.plan}))
			w := httptest.NewRecorder()
			var err error
			if err = e.HandleList(w, req); err != nil {
				w = httptest.NewRecorder()
				writeErr(w, req, err)
			}
			if w.Code != c.status {
				t.Fatalf("got status %d, want %d (%s)", w.Code, c.status, w.Body)
			}
			if c.status != 200 {
				return
			}
			var body struct {
				Plan  string `json:"plan"`
				Items []struct {
					Name       string          `json:"name"`
					Parameters json.RawMessage `json:"parameters"`
				} `json:"items"`
			}
			if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, it := range body.Items {
				names = append(names, it.Name)
				if !json.Valid(it.Parameters) {
					t.Errorf("%s: parameters are not JSON", it.Name)
				}
			}
			if got := strings.Join(names, ","); got != c.want {
				t.Fatalf("got %s, want %s", got, c.want)
			}
		})
	}
	t.Run("unauthenticated", func(t *testing.T) {
		t.Parallel()
		err := e.HandleList(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/v1/tools", nil))
		wantCode(t, err, "UNAUTHORIZED")
	})
}
