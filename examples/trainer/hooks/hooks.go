// Package hooks is the trainer app's reference tool server: the app's
// side of draft_workout_plan, the webhook tool that
// examples/trainer/voxgate.yaml declares. The model's forced call's
// arguments are the plan; voxgate has checked them against the plan's JSON
// Schema before they arrive, and this server applies the seed's rule
// engine, the checks a schema cannot say, and answers the plan draft the
// app shows the trainer.
//
// It imports nothing from voxgate but the examples' signature check
// (examples/hookauth): an app team copies both, or writes the same in its
// own stack.
package hooks

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/voxgate/voxgate/examples/hookauth"
)

// Plan is the seed's WorkoutPlanOutputSchema.
type Plan struct {
	PlanName      string `json:"planName"`
	DurationWeeks int    `json:"durationWeeks"`
	Summary       string `json:"summary"`
	Days          []Day  `json:"days"`
}

// Day is one day of a plan.
type Day struct {
	DayNumber         int        `json:"dayNumber"`
	Name              string     `json:"name"`
	Focus             string     `json:"focus,omitempty"`
	DayType           string     `json:"dayType"`
	EstimatedDuration float64    `json:"estimatedDuration,omitempty"`
	Exercises         []Exercise `json:"exercises"`
}

// Exercise is one exercise of a day.
type Exercise struct {
	Name               string   `json:"name"`
	SetScheme          string   `json:"setScheme,omitempty"`
	RepGoal            string   `json:"repGoal,omitempty"`
	RestPeriod         *float64 `json:"restPeriod,omitempty"`
	Tempo              string   `json:"tempo,omitempty"`
	IntensityGuideline string   `json:"intensityGuideline,omitempty"`
	Notes              string   `json:"notes,omitempty"`
	IsOptional         bool     `json:"isOptional,omitempty"`
}

// maxExercisesPerDay is the rule engine's trim.
const maxExercisesPerDay = 20

// Check is the seed's rule engine: a plan with more days than its weeks
// hold, or with a day number twice, is refused; more than 20 exercises
// in a day are trimmed and rest periods clamped to 0-600 s, each with a
// warning for the trainer.
func Check(p *Plan) (warnings []string, err error) {
	if len(p.Days) > p.DurationWeeks*7 {
		return nil, fmt.Errorf("the plan has %d days, more than %d weeks hold", len(p.Days), p.DurationWeeks)
	}
	seen := map[int]bool{}
	for i := range p.Days {
		d := &p.Days[i]
		if seen[d.DayNumber] {
			return nil, fmt.Errorf("day number %d appears twice", d.DayNumber)
		}
		seen[d.DayNumber] = true
		if len(d.Exercises) > maxExercisesPerDay {
			d.Exercises = d.Exercises[:maxExercisesPerDay]
			warnings = append(warnings, fmt.Sprintf("day %d: trimmed to %d exercises", d.DayNumber, maxExercisesPerDay))
		}
		for j := range d.Exercises {
			if r := d.Exercises[j].RestPeriod; r != nil && (*r < 0 || *r > 600) {
				*r = min(max(*r, 0), 600)
				warnings = append(warnings, fmt.Sprintf("day %d: a rest period was clamped to 0-600 s", d.DayNumber))
			}
		}
	}
	return warnings, nil
}

// Handler serves POST /hooks/draft_workout_plan, checking voxgate's
// signature with secret.
func Handler(secret []byte) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/hooks/draft_workout_plan" {
			http.Error(w, "not found", http.StatusNotFound)
			return
		}
		c, refused := hookauth.ReadCall(r, "draft_workout_plan", secret, 256<<10, time.Now())
		if refused != 0 {
			http.Error(w, http.StatusText(refused), refused)
			return
		}
		var p Plan
		if json.Unmarshal(c.Arguments, &p) != nil {
			http.Error(w, "bad call", http.StatusBadRequest)
			return
		}
		warnings, err := Check(&p)
		if err != nil {
			// voxgate turns a non-2xx answer into a tool error the model
			// reads; the message stays in the app's logs.
			http.Error(w, err.Error(), http.StatusUnprocessableEntity)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"status": "draft", "plan": p, "warnings": append([]string{}, warnings...)})
	})
}
