package hooks

import (
	"encoding/json"
	"math"
)

// ContextBudgetTokens is the seed's maximum context size. Tokens are
// counted as voxgate and its simulator count them, ceil(bytes / 4).
const ContextBudgetTokens = 4000

// section is one context source, in the seed's priority order.
type section struct {
	key  string
	data any
}

// buildContext summarises the seed's context sources for a user: the
// profile always, then the others in priority order while they fit the
// budget. Sources are aggregated (averages, rates), never raw rows, and
// no raw payload is ever included.
func buildContext(userID string, budget int) map[string]any {
	d := sampleFor(userID)
	out := map[string]any{
		// The profile fields voxgate puts in the model's instructions
		// (language, diet, allergies, goals, units).
		"language": d.Language, "units": "metric", "diet": d.Diet, "allergies": d.Allergies, "goals": d.Goals,
		"profile": map[string]any{"age": d.Age, "weight_kg": d.WeightKG, "height_cm": d.HeightCM},
	}
	for _, s := range []section{
		{"health_summary_7d", d.healthSummary()},
		{"plan_adherence", d.adherence()},
		{"nutrition_3d", d.nutrition()},
		{"supplements_7d", map[string]any{"active": d.Supplements, "adherence_rate": d.SupplementAdherence}},
		{"ai_memory", d.Memory},
		{"baseline", map[string]any{"stress": 48, "sleep_hours": 7.1, "resting_hr": 61}},
		{"recovery_today", map[string]any{"score": d.Recovery, "readiness": readiness(d.Recovery)}},
	} {
		out[s.key] = s.data
		if tokens(out) > budget {
			delete(out, s.key)
			out["trimmed"] = true
			break
		}
	}
	return out
}

func tokens(v any) int {
	b, _ := json.Marshal(v)
	return (len(b) + 3) / 4
}

func readiness(score int) string {
	switch {
	case score >= 75:
		return "high"
	case score >= 50:
		return "moderate"
	}
	return "low"
}

func round1(f float64) float64 { return math.Round(f*10) / 10 }

// getContext answers the context tool. voxgate keeps each user's answer
// for voice.context_cache_ttl (5 minutes here, the seed's snapshot
// cache), so this runs about once per user in that time.
func getContext(_ *Server, userID string, _ json.RawMessage) (any, error) {
	return buildContext(userID, ContextBudgetTokens), nil
}
