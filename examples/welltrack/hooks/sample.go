package hooks

import "math"

// sample is one user's wellness data as the app's wt_ tables would hold
// it: raw daily values, which the context builder summarises.
type sample struct {
	Language, Diet      string
	Allergies, Goals    []string
	Age                 int
	WeightKG, HeightCM  float64
	SleepH, Stress      []float64 // last 7 days
	Steps, RestingHR    []float64
	VO2Max              float64
	PlanDone, PlanTotal int
	Missed              []string
	Calories, ProteinG  []float64 // last 3 days
	CalorieTarget       float64
	ProteinTarget       float64
	Supplements         []string
	SupplementAdherence float64
	Memory              map[string]any
	Recovery            int
}

// sampleFor is the same week for every user: a reference server has no
// database of its own.
func sampleFor(string) sample {
	return sample{
		Language: "en", Diet: "gluten-free", Allergies: []string{"dairy"},
		Goals: []string{"improve_sleep", "reduce_stress"}, Age: 34, WeightKG: 68, HeightCM: 165,
		SleepH:    []float64{6.0, 6.5, 5.8, 6.4, 6.1, 6.6, 6.0},
		Stress:    []float64{70, 62, 66, 64, 68, 60, 65},
		Steps:     []float64{8200, 9100, 7600, 8800, 8400, 9000, 8400},
		RestingHR: []float64{62, 61, 63, 62, 60, 61, 62},
		VO2Max:    38, PlanDone: 18, PlanTotal: 25, Missed: []string{"yoga", "evening_walk"},
		Calories: []float64{1800, 1900, 1850}, ProteinG: []float64{92, 98, 95},
		CalorieTarget: 1900, ProteinTarget: 100,
		Supplements: []string{"vitamin_d", "magnesium"}, SupplementAdherence: 0.86,
		Memory:   map[string]any{"prefers_simple_recipes": true, "dislikes_fish": true, "workout_time_preference": "morning"},
		Recovery: 62,
	}
}

func avg(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

func (d sample) healthSummary() map[string]any {
	return map[string]any{"avg_sleep_hours": round1(avg(d.SleepH)), "avg_stress_score": round1(avg(d.Stress)),
		"avg_steps": round1(avg(d.Steps)), "avg_resting_hr": round1(avg(d.RestingHR)), "vo2max_latest": d.VO2Max}
}

func (d sample) adherence() map[string]any {
	return map[string]any{"completion_rate": math.Round(float64(d.PlanDone)/float64(d.PlanTotal)*100) / 100,
		"missed_items": d.Missed}
}

func (d sample) nutrition() map[string]any {
	return map[string]any{"avg_calories": round1(avg(d.Calories)), "protein_g": round1(avg(d.ProteinG)),
		"vs_targets": map[string]any{"calories": round1(avg(d.Calories) / d.CalorieTarget),
			"protein": round1(avg(d.ProteinG) / d.ProteinTarget)}}
}
