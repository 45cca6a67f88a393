package main

import (
	"context"

	"github.com/voxgate/voxgate/lifecycle"
)

// newLifecycle checks the configured OpenAI models (every route target on
// OpenAI, and voice's) against the provider's
// models list before the gateway takes traffic: a model past its shutdown
// date stops startup with a message naming it, its date and its
// replacement. It returns the checker for the daily re-check, or nil when
// no provider is configured (chat and voice are then off).
func newLifecycle(ctx context.Context, m *Main) (*lifecycle.Checker, error) {
	key := m.Config.Secrets.OpenAIAPIKey
	if key == "" {
		return nil, nil
	}
	base := m.Config.Secrets.OpenAIBaseURL
	if base == "" {
		base = defaultOpenAIBaseURL
	}
	lister, err := lifecycle.NewOpenAILister(base, key, nil)
	if err != nil {
		return nil, err
	}
	voice := m.Config.Voice
	c, err := lifecycle.New(lifecycle.Params{
		Models: append(lifecycleModels(m, base),
			lifecycle.Configured{Key: "voice.model", Model: voice.Model},
			lifecycle.Configured{Key: "voice.transcription_model", Model: voice.TranscriptionModel}),
		Lister: lister, Now: m.Now, Registerer: m.Registry, Logger: m.Logger,
	})
	if err != nil {
		return nil, err
	}
	if _, err := c.Check(ctx); err != nil {
		return nil, err
	}
	return c, nil
}
