package openai_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// The organization usage and costs validate against the official schema,
// decode with openai-go's admin types, and report what the simulator
// billed: a day's tokens are its completions' tokens, by model, in the
// UTC day it served them.
func TestOrgUsageAndCosts(t *testing.T) {
	t.Parallel()
	day := time.Date(2026, 11, 3, 0, 0, 0, 0, time.UTC)
	_, ts := simtest.NewServer(t, sim.Config{Now: func() time.Time { return day.Add(5 * time.Hour) }})
	ctx := context.Background()
	client := openai.NewClient(option.WithBaseURL(ts.URL+"/v1"), option.WithAPIKey(simtest.TestKey), option.WithAdminAPIKey(simtest.TestKey), option.WithMaxRetries(0))
	var tokens int64
	for range 3 {
		resp, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
			Model: "gpt-4.1-mini", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("soup for two")},
		})
		if err != nil {
			t.Fatal(err)
		}
		tokens += resp.Usage.PromptTokens + resp.Usage.CompletionTokens
	}
	spec := simtest.Spec(t)
	for _, c := range []struct{ path, schema string }{
		{"/v1/organization/usage/completions?start_time=%d&group_by[]=model&limit=3", "UsageResponse"},
		{"/v1/organization/costs?start_time=%d&group_by[]=line_item&limit=3", "UsageResponse"},
	} {
		req, _ := http.NewRequest("GET", ts.URL+fmt.Sprintf(c.path, day.Add(-24*time.Hour).Unix()), nil)
		req.Header.Set("Authorization", "Bearer "+simtest.TestKey)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d %s", c.path, resp.StatusCode, body)
		}
		if err := spec.Validate(c.schema, body); err != nil {
			t.Fatalf("%s: %v\n%s", c.path, err, body)
		}
	}
	usage, err := client.Admin.Organization.Usage.Completions(ctx, openai.AdminOrganizationUsageCompletionsParams{
		StartTime: day.Unix(), EndTime: openai.Int(day.Add(48 * time.Hour).Unix()), GroupBy: []string{"model"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(usage.Data) != 2 || len(usage.Data[0].Results) != 1 || len(usage.Data[1].Results) != 0 {
		t.Fatalf("buckets %+v", usage.Data)
	}
	r := usage.Data[0].Results[0]
	if r.Model == "" || r.InputTokens+r.OutputTokens != tokens || r.NumModelRequests != 3 {
		t.Fatalf("result %+v, want %d tokens in 3 requests", r, tokens)
	}
	costs, err := client.Admin.Organization.Usage.Costs(ctx, openai.AdminOrganizationUsageCostsParams{
		StartTime: day.Unix(), EndTime: openai.Int(day.Add(24 * time.Hour).Unix()), GroupBy: []string{"line_item"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(costs.Data) != 1 || len(costs.Data[0].Results) != 1 || costs.Data[0].Results[0].Amount.Value <= 0 || costs.Data[0].Results[0].LineItem != r.Model {
		t.Fatalf("costs %+v", costs.Data)
	}
	// Paging: one bucket a page, the next page's cursor given.
	page, err := client.Admin.Organization.Usage.Costs(ctx, openai.AdminOrganizationUsageCostsParams{
		StartTime: day.Unix(), EndTime: openai.Int(day.Add(72 * time.Hour).Unix()), Limit: openai.Int(1)})
	if err != nil || !page.HasMore || page.NextPage == "" || len(page.Data) != 1 {
		t.Fatalf("page %+v, %v", page, err)
	}
	// Bad parameters are the API's 400.
	for _, q := range []string{"", "?start_time=x", "?start_time=1&bucket_width=1h", "?start_time=1&group_by[]=user_id", "?start_time=1&limit=0"} {
		req, _ := http.NewRequest("GET", ts.URL+"/v1/organization/costs"+q, nil)
		req.Header.Set("Authorization", "Bearer "+simtest.TestKey)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("%q: %d", q, resp.StatusCode)
		}
	}
}
