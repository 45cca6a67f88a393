package lifecycle

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// OpenAILister reads GET /v1/models through openai-go.
type OpenAILister struct{ client openai.Client }

// NewOpenAILister lists the models of the OpenAI API at baseURL (the
// simulator's under voxgate dev). httpClient may be nil.
func NewOpenAILister(baseURL, apiKey string, httpClient *http.Client) (*OpenAILister, error) {
	if baseURL == "" || apiKey == "" {
		return nil, errors.New("lifecycle: the OpenAI lister needs a base URL and a key")
	}
	opts := []option.RequestOption{
		option.WithBaseURL(strings.TrimRight(baseURL, "/") + "/"),
		option.WithAPIKey(apiKey),
		option.WithMaxRetries(0), // the next daily check is the retry
	}
	if httpClient != nil {
		opts = append(opts, option.WithHTTPClient(httpClient))
	}
	return &OpenAILister{client: openai.NewClient(opts...)}, nil
}

// ListModels reads every page of the list. shutdown_date is the SDK's
// Model.ShutdownDate; null (or absent) means none announced.
func (l *OpenAILister) ListModels(ctx context.Context) ([]Listed, error) {
	var out []Listed
	pager := l.client.Models.ListAutoPaging(ctx)
	for pager.Next() {
		m := pager.Current()
		listed := Listed{ID: m.ID}
		if m.JSON.ShutdownDate.Valid() && !m.ShutdownDate.IsZero() {
			y, mo, d := m.ShutdownDate.UTC().Date()
			listed.Shutdown, listed.HasShutdown = time.Date(y, mo, d, 0, 0, 0, 0, time.UTC), true
		}
		out = append(out, listed)
	}
	return out, pager.Err()
}
