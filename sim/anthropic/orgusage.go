package anthropic

import (
	"net/http"
	"time"
)

// EndpointOrgUsage is the Usage and Cost Analytics API's token usage
// (anthropic-sdk-go v2.15.0, Beta.Organization.Analytics.Usage.List): the
// Messages the organization was billed for, by token class.
const EndpointOrgUsage = "/v1/organizations/analytics/usage"

// usageRow is one row of the usage report: a model's tokens over one
// bucket, in BetaAnalyticsUsageMetrics's classes (input_tokens on a
// Message excludes the cache classes, and so does uncached_input_tokens).
type usageRow struct {
	StartingAt time.Time      `json:"starting_at"`
	EndingAt   time.Time      `json:"ending_at"`
	Group      map[string]any `json:"group"`
	Usage      usageMetrics   `json:"usage"`
}

type usageMetrics struct {
	UncachedInputTokens  int64           `json:"uncached_input_tokens"`
	CacheCreation        usageCacheSplit `json:"cache_creation"`
	CacheReadInputTokens int64           `json:"cache_read_input_tokens"`
	OutputTokens         int64           `json:"output_tokens"`
	TotalTokens          int64           `json:"total_tokens"`
	Requests             int64           `json:"requests"`
	ServerToolUse        map[string]any  `json:"server_tool_use"`
}

type usageCacheSplit struct {
	Ephemeral1h int64 `json:"ephemeral_1h_input_tokens"`
	Ephemeral5m int64 `json:"ephemeral_5m_input_tokens"`
}

// OrgUsage serves the usage report over the same query and grouping as
// the cost report (OrgCost): every Message billed, its tokens summed.
func (s *Server) OrgUsage(w http.ResponseWriter, r *http.Request) error {
	return s.report(w, r, func(g reportGroup) any {
		m := usageMetrics{Requests: int64(len(g.billed)), ServerToolUse: map[string]any{"web_search_requests": 0}}
		for _, u := range g.billed {
			m.UncachedInputTokens += u.uncached
			m.CacheCreation.Ephemeral5m += u.write5m
			m.CacheCreation.Ephemeral1h += u.write1h
			m.CacheReadInputTokens += u.read
			m.OutputTokens += u.out
		}
		m.TotalTokens = m.UncachedInputTokens + m.CacheCreation.Ephemeral5m + m.CacheCreation.Ephemeral1h +
			m.CacheReadInputTokens + m.OutputTokens
		return usageRow{StartingAt: g.start, EndingAt: g.end, Group: map[string]any{"model": g.model}, Usage: m}
	})
}
