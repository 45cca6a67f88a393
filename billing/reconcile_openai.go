package billing

import (
	"context"
	"math"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// OpenAIUsage reads OpenAI's organization Usage (completions) and Costs
// APIs with an admin key, through the official client.
type OpenAIUsage struct {
	client openai.Client
}

// NewOpenAIUsage is the usage of the organization at baseURL ("" is
// OpenAI's) read with adminKey.
func NewOpenAIUsage(baseURL, adminKey string) *OpenAIUsage {
	opts := []option.RequestOption{option.WithAdminAPIKey(adminKey), option.WithMaxRetries(2)}
	if baseURL != "" {
		opts = append(opts, option.WithBaseURL(baseURL))
	}
	return &OpenAIUsage{client: openai.NewClient(opts...)}
}

// How many daily buckets one page asks for: the most each API returns
// for 1d buckets (the completions usage 31, the costs 180), so a range of
// MaxReconcileDays is one costs request.
const (
	maxUsageDays = 31
	maxCostDays  = 180
)

// Figures reads tokens from the completions usage grouped by model and
// dollars from the costs grouped by line item, page by page. A line item
// "<model>, input" (how OpenAI names them) counts for its model.
func (o *OpenAIUsage) Figures(ctx context.Context, from, to time.Time) ([]ProviderFigures, error) {
	var out []ProviderFigures
	usage := openai.AdminOrganizationUsageCompletionsParams{
		StartTime: from.Unix(), EndTime: openai.Int(to.Unix()), Limit: openai.Int(maxUsageDays),
		BucketWidth: openai.AdminOrganizationUsageCompletionsParamsBucketWidth1d, GroupBy: []string{"model"},
	}
	for {
		page, err := o.client.Admin.Organization.Usage.Completions(ctx, usage)
		if err != nil {
			return nil, err
		}
		for _, b := range page.Data {
			date := time.Unix(b.StartTime, 0).UTC().Format(time.DateOnly)
			for _, r := range b.Results {
				out = append(out, ProviderFigures{Date: date, Model: r.Model, Tokens: r.InputTokens + r.OutputTokens})
			}
		}
		if !page.HasMore || page.NextPage == "" {
			break
		}
		usage.Page = openai.String(page.NextPage)
	}
	costs := openai.AdminOrganizationUsageCostsParams{
		StartTime: from.Unix(), EndTime: openai.Int(to.Unix()), Limit: openai.Int(maxCostDays),
		BucketWidth: openai.AdminOrganizationUsageCostsParamsBucketWidth1d, GroupBy: []string{"line_item"},
	}
	for {
		page, err := o.client.Admin.Organization.Usage.Costs(ctx, costs)
		if err != nil {
			return nil, err
		}
		for _, b := range page.Data {
			date := time.Unix(b.StartTime, 0).UTC().Format(time.DateOnly)
			for _, r := range b.Results {
				model, _, _ := strings.Cut(r.LineItem, ", ")
				out = append(out, ProviderFigures{Date: date, Model: model, CostMicros: int64(math.Round(r.Amount.Value * 1e6))})
			}
		}
		if !page.HasMore || page.NextPage == "" {
			break
		}
		costs.Page = openai.String(page.NextPage)
	}
	return out, nil
}
