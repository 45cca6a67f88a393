package responses_test

import (
	"context"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"github.com/voxgate/voxgate/internal/testkit"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// TestResponsesInOrgUsage: a Responses call counts in the organization's
// completions usage like a chat call, its reasoning tokens among its
// output tokens.
func TestResponsesInOrgUsage(t *testing.T) {
	day := time.Date(2026, 11, 3, 0, 0, 0, 0, time.UTC)
	_, url := testkit.NewSim(t, sim.Config{Now: func() time.Time { return day.Add(5 * time.Hour) }})
	ctx := context.Background()
	client := openai.NewClient(option.WithBaseURL(url+"/v1"), option.WithAPIKey(simtest.TestKey), option.WithAdminAPIKey(simtest.TestKey), option.WithMaxRetries(0))
	resp, err := client.Responses.New(ctx, responses.ResponseNewParams{Model: "o3",
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("soup for two")}})
	if err != nil {
		t.Fatal(err)
	}
	usage, err := client.Admin.Organization.Usage.Completions(ctx, openai.AdminOrganizationUsageCompletionsParams{
		StartTime: day.Unix(), EndTime: openai.Int(day.Add(24 * time.Hour).Unix()), GroupBy: []string{"model"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(usage.Data) != 1 || len(usage.Data[0].Results) != 1 {
		t.Fatalf("buckets %+v", usage.Data)
	}
	r := usage.Data[0].Results[0]
	if r.NumModelRequests != 1 || r.InputTokens != resp.Usage.InputTokens || r.OutputTokens != resp.Usage.OutputTokens || resp.Usage.OutputTokensDetails.ReasoningTokens == 0 {
		t.Fatalf("result %+v for usage %+v", r, resp.Usage)
	}
}
