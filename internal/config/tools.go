package config

// Tools configures the tool registry (DESIGN §8). The tools issue fills in
// the definitions; the section exists now so config files can carry it.
type Tools struct {
	Webhooks []WebhookTool `yaml:"webhooks"`
}

// WebhookTool is a tool executed by POSTing to a fixed URL.
type WebhookTool struct {
	Name        string         `yaml:"name"`
	Description string         `yaml:"description"`
	URL         string         `yaml:"url"`
	SecretEnv   string         `yaml:"secret_env"`
	Parameters  map[string]any `yaml:"parameters"`
}

// DefaultTools has no webhooks; the built-in tools need no config.
func DefaultTools() Tools { return Tools{} }

func (t Tools) validate() []error { return nil }
