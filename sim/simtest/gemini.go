package simtest

import (
	"context"
	"testing"

	"google.golang.org/genai"
)

// NewGeminiClient is the official genai client for the Gemini API backend,
// pointed at a simulator's base URL as HTTPOptions.BaseURL points it at any
// other host, with TestKey sent as x-goog-api-key. It leaves the SDK's HTTP
// retries off (its default) so a test sees every answer as sent.
func NewGeminiClient(tb testing.TB, baseURL string) *genai.Client {
	tb.Helper()
	c, err := genai.NewClient(context.Background(), &genai.ClientConfig{
		APIKey:      TestKey,
		Backend:     genai.BackendGeminiAPI,
		HTTPOptions: genai.HTTPOptions{BaseURL: baseURL},
	})
	if err != nil {
		tb.Fatalf("genai.NewClient: %v", err)
	}
	return c
}
