package quota

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/voxgate/voxgate/internal/config"
)

// TestPlansJSONNamesEveryLimit: the plans the admission statement gets
// carry every limit of a plan, each under a name quota_limits has. A name
// the type lacks would be dropped by jsonb_populate_record and read as
// NULL, which every check takes for unlimited.
func TestPlansJSONNamesEveryLimit(t *testing.T) {
	t.Parallel()
	plan := config.Plan{ // every limit a different value, so none can stand in for another
		RequestsPerMinute: 1, RequestsPerHour: 2, RequestsPerDay: 3, TokensPerDay: 4,
		CostPerDayMicros: 5, CallsPerDay: 6, ConcurrentTurns: 7, VoiceSecondsPerMonth: 8,
		MaxSessionSeconds: 9, VoiceSessions: 10,
	}
	s := mustService(t, testPool(t), onePlan(plan), nil)

	var plans map[string]map[string]int64
	if err := json.Unmarshal([]byte(s.plans), &plans); err != nil {
		t.Fatal(err)
	}
	var got []int64
	for _, v := range plans["p"] {
		got = append(got, v)
	}
	slices.Sort(got)
	if want := []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}; !slices.Equal(got, want) {
		t.Errorf("got limits %v in the plans JSON, want every limit of the plan %v", got, want)
	}

	var same bool
	err := s.pool.QueryRow(context.Background(),
		`SELECT to_jsonb(jsonb_populate_record(NULL::quota_limits, $1::jsonb -> 'p')) = $1::jsonb -> 'p'`,
		s.plans).Scan(&same)
	if err != nil {
		t.Fatal(err)
	}
	if !same {
		t.Errorf("got plans JSON %s, want exactly the fields of quota_limits", s.plans)
	}
}
