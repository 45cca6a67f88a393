package quota

import (
	"encoding/json"

	"github.com/voxgate/voxgate/internal/config"
)

// sqlLimits is a plan's limits as the admission statement reads them: the
// fields of the quota_limits type (migrations/0063), named as in the config
// file, so that no position can be confused with another.
type sqlLimits struct {
	RequestsPerMinute    int64 `json:"requests_per_minute"`
	RequestsPerHour      int64 `json:"requests_per_hour"`
	RequestsPerDay       int64 `json:"requests_per_day"`
	TokensPerDay         int64 `json:"tokens_per_day"`
	CostPerDayMicros     int64 `json:"cost_per_day_micros"`
	CallsPerDay          int64 `json:"calls_per_day"`
	ConcurrentTurns      int64 `json:"concurrent_turns"`
	VoiceSecondsPerMonth int64 `json:"voice_seconds_per_month"`
	MaxSessionSeconds    int64 `json:"max_session_s"`
	VoiceSessions        int64 `json:"voice_sessions"`
}

// plansJSON is every plan's limits by plan name, for quota_admit_requests.
func plansJSON(plans config.Plans) (string, error) {
	m := make(map[string]sqlLimits, len(plans))
	for name, p := range plans {
		m[name] = sqlLimits{
			RequestsPerMinute: p.RequestsPerMinute, RequestsPerHour: p.RequestsPerHour,
			RequestsPerDay: p.RequestsPerDay, TokensPerDay: p.TokensPerDay,
			CostPerDayMicros: p.CostPerDayMicros, CallsPerDay: p.CallsPerDay,
			ConcurrentTurns: p.ConcurrentTurns, VoiceSecondsPerMonth: p.VoiceSecondsPerMonth,
			MaxSessionSeconds: p.MaxSessionSeconds, VoiceSessions: p.VoiceSessions,
		}
	}
	b, err := json.Marshal(m)
	return string(b), err
}
