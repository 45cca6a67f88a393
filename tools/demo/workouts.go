package demo

import (
	"context"
	"encoding/json"
	"math"
	"slices"
	"sort"

	"github.com/voxgate/voxgate/tools"
)

// workout is one entry of the catalogue recommend_workouts picks from.
type workout struct {
	ID        string
	Name      string
	Kind      string // strength, cardio, mobility, hiit
	Intensity int    // 1 low, 2 moderate, 3 high
	MinLevel  int    // 0 beginner, 1 intermediate, 2 advanced
	Goals     []string
	Minutes   int
	How       string
}

// catalogue is fixed data: the same profile and recovery score always get
// the same plan.
var catalogue = []workout{
	{"walk", "Brisk walk", "cardio", 1, 0, []string{"lose_weight", "general_fitness", "endurance"}, 30, "Walk at a pace where you can talk but not sing."},
	{"mobility", "Full-body mobility flow", "mobility", 1, 0, []string{"general_fitness", "build_muscle", "endurance", "lose_weight"}, 20, "Slow hip, spine and shoulder circles, cat-cow and deep squats holds."},
	{"yoga", "Restorative yoga", "mobility", 1, 0, []string{"general_fitness", "endurance"}, 30, "Long, supported holds; breathe slowly."},
	{"cycle-easy", "Easy cycle", "cardio", 1, 0, []string{"endurance", "lose_weight"}, 40, "Zone 2: steady effort, nose breathing."},
	{"bodyweight", "Bodyweight circuit", "strength", 2, 0, []string{"build_muscle", "general_fitness", "lose_weight"}, 25, "3 rounds: 10 squats, 8 push-ups (knees fine), 10 lunges, 30 s plank."},
	{"jog", "Steady jog", "cardio", 2, 0, []string{"endurance", "lose_weight", "general_fitness"}, 30, "Comfortable pace, mostly conversational."},
	{"dumbbell", "Dumbbell full body", "strength", 2, 1, []string{"build_muscle", "general_fitness"}, 40, "3×10 goblet squats, rows, presses and Romanian deadlifts."},
	{"swim", "Technique swim", "cardio", 2, 1, []string{"endurance", "general_fitness"}, 35, "Easy lengths with drills between sets."},
	{"tempo", "Tempo run", "cardio", 3, 1, []string{"endurance"}, 35, "10 min easy, 15 min comfortably hard, 10 min easy."},
	{"hiit", "HIIT intervals", "hiit", 3, 1, []string{"lose_weight", "general_fitness"}, 20, "8 rounds of 30 s hard, 60 s easy after a full warm-up."},
	{"heavy", "Heavy strength session", "strength", 3, 2, []string{"build_muscle"}, 50, "5×5 squats, bench press and deadlifts at a challenging weight."},
	{"intervals", "Track intervals", "cardio", 3, 2, []string{"endurance"}, 45, "6×800 m at 5 km pace with 2 min jog recoveries."},
}

var levels = map[string]int{"beginner": 0, "intermediate": 1, "advanced": 2}

// WorkoutPlan is recommend_workouts' result.
type WorkoutPlan struct {
	RecoveryScore int                 `json:"recovery_score"`
	Readiness     string              `json:"readiness"` // rest, easy, moderate, hard
	Goal          string              `json:"goal"`
	FitnessLevel  string              `json:"fitness_level"`
	Workouts      []WorkoutSuggestion `json:"workouts"`
	Note          string              `json:"note"`
}

// WorkoutSuggestion is one suggested session.
type WorkoutSuggestion struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	Kind    string `json:"kind"`
	Minutes int    `json:"minutes"`
	How     string `json:"how"`
}

func (d *app) recommendWorkoutsTool() *tools.Tool {
	return &tools.Tool{
		Name: "recommend_workouts",
		Description: "Suggest up to three workouts for today from the user's profile (goal, fitness level) and " +
			"their recovery score from 0 (exhausted) to 100 (fully recovered).",
		Parameters: json.RawMessage(`{"type":"object","properties":{
	"recovery_score":{"type":"integer","minimum":0,"maximum":100,"description":"Today's recovery, 0–100."},
	"minutes":{"type":"integer","minimum":10,"maximum":120,"description":"Time available; default 30."}},
"required":["recovery_score"],"additionalProperties":false}`),
		Voice: true, MaxTokens: 600, SafetyLevel: tools.SafetyReview,
		Run: d.recommendWorkouts,
	}
}

func (d *app) recommendWorkouts(ctx context.Context, inv tools.Invocation) (tools.Outcome, error) {
	var a struct {
		Recovery int `json:"recovery_score"`
		Minutes  int `json:"minutes"`
	}
	if err := inv.Decode(&a); err != nil {
		return tools.Outcome{}, err
	}
	p, err := d.profile(ctx, inv.UserID)
	if err != nil {
		return tools.Outcome{}, err
	}
	var goals struct {
		Primary string `json:"primary"`
	}
	_ = json.Unmarshal(p.Goals, &goals)
	plan := Recommend(a.Recovery, a.Minutes, p.FitnessLevel, goals.Primary)
	card, err := tools.NewCard("workout_plan", plan)
	if err != nil {
		return tools.Outcome{}, err
	}
	return tools.Outcome{Data: plan, Cards: []tools.Card{card}}, nil
}

// Recommend is the pure rule behind recommend_workouts: recovery decides the
// intensity allowed, fitness level rules out sessions above the user, and
// the goal orders what is left. Ties break by catalogue order.
func Recommend(recovery, minutes int, level, goal string) WorkoutPlan {
	if minutes == 0 {
		minutes = 30
	}
	if _, ok := levels[level]; !ok {
		level = "beginner"
	}
	if goal == "" {
		goal = "general_fitness"
	}
	plan := WorkoutPlan{RecoveryScore: recovery, Goal: goal, FitnessLevel: level, Workouts: []WorkoutSuggestion{}}
	var lo, hi int
	switch {
	case recovery < 20:
		plan.Readiness, lo, hi = "rest", 1, 1
	case recovery < 40:
		plan.Readiness, lo, hi = "easy", 1, 1
	case recovery < 70:
		plan.Readiness, lo, hi = "moderate", 1, 2
	default:
		plan.Readiness, lo, hi = "hard", 2, 3
	}
	type cand struct {
		w     workout
		score int
		i     int
	}
	var cs []cand
	for i, w := range catalogue {
		if w.Intensity < lo || w.Intensity > hi || w.MinLevel > levels[level] {
			continue
		}
		s := w.Intensity * 2
		if slices.Contains(w.Goals, goal) {
			s += 10
		}
		cs = append(cs, cand{w, s, i})
	}
	sort.SliceStable(cs, func(i, j int) bool {
		if cs[i].score != cs[j].score {
			return cs[i].score > cs[j].score
		}
		return cs[i].i < cs[j].i
	})
	n := 3
	if plan.Readiness == "rest" {
		n = 1 // a rest day gets one gentle option, not a programme
	}
	for _, c := range cs[:min(n, len(cs))] {
		m := min(c.w.Minutes, minutes)
		if plan.Readiness == "rest" {
			m = int(math.Min(float64(m), 20))
		}
		plan.Workouts = append(plan.Workouts, WorkoutSuggestion{ID: c.w.ID, Name: c.w.Name, Kind: c.w.Kind, Minutes: m, How: c.w.How})
	}
	plan.Note = "Listen to your body and stop if anything hurts. " + disclaimer
	if plan.Readiness == "rest" {
		plan.Note = "Your recovery is low: today is best for rest or very gentle movement. " + plan.Note
	}
	return plan
}
