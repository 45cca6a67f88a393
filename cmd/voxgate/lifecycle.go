package main

import (
	"context"

	"github.com/voxgate/voxgate/lifecycle"
)

// newLifecycle checks the configured models before the gateway takes
// traffic: OpenAI's (every route target on OpenAI, and voice's) against
// the provider's models list, Anthropic's and Gemini's against the
// embedded table. A model past its shutdown date stops startup with a
// message naming it, its date and its replacement. It returns the checker
// for the daily re-check, or nil when no model is configured.
func newLifecycle(ctx context.Context, m *Main) (*lifecycle.Checker, error) {
	key := m.Config.Secrets.OpenAIAPIKey
	base := m.Config.Secrets.OpenAIBaseURL
	if base == "" {
		base = defaultOpenAIBaseURL
	}
	models := lifecycleModels(m, base)
	var lister lifecycle.Lister = lifecycle.NoList{}
	if key != "" {
		l, err := lifecycle.NewOpenAILister(base, key, nil)
		if err != nil {
			return nil, err
		}
		lister = l
		voice := m.Config.Voice
		models = append(models,
			lifecycle.Configured{Key: "voice.model", Model: voice.Model},
			lifecycle.Configured{Key: "voice.transcription_model", Model: voice.TranscriptionModel})
	}
	if len(models) == 0 {
		return nil, nil
	}
	c, err := lifecycle.New(lifecycle.Params{
		Models: models, Lister: lister, Now: m.Now, Registerer: m.Registry, Logger: m.Logger,
	})
	if err != nil {
		return nil, err
	}
	if _, err := c.Check(ctx); err != nil {
		return nil, err
	}
	return c, nil
}
