package safety

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
)

// Flag types shared by every producer of safety flags.
const (
	// UnsafeValue marks a write refused because a number is out of range.
	UnsafeValue = "unsafe_value"
)

// Flag is one entry of a response's safety_flags (DESIGN §7).
type Flag struct {
	Type    string `json:"type"`
	Message string `json:"message"`
	Blocked bool   `json:"blocked"`
	// Field names the offending input, when there is one.
	Field string `json:"field,omitempty"`
}

// Range is the inclusive span of plausible values for one measure.
type Range struct {
	Measure string
	Unit    string
	Min     float64
	Max     float64
}

// The measures of DESIGN §12, and MealCalories.
const (
	WeightKg = "weight_kg"
	HeightCm = "height_cm"
	// Calories is a day's energy: a daily intake or a daily calorie goal,
	// such as a profile's goals.daily_calories. DESIGN §12's 500–10,000
	// kcal is a range for a whole day.
	Calories = "calories"
	// MealCalories is the energy of one meal or snack. A day's minimum
	// does not apply to a part of the day (a 300 kcal snack is ordinary),
	// so a meal may be anything from 0 (black coffee, water) up to the
	// day's maximum: nothing negative, nothing no day could hold.
	MealCalories = "meal_calories"
	ProteinG     = "protein_g"
	SleepH       = "sleep_h"
	Stress       = "stress"
	VO2Max       = "vo2max"
	HeartRate    = "heart_rate"
)

// ranges is DESIGN §12's table plus MealCalories, derived from it. It is
// unexported so nothing can widen a range at run time; Ranges returns a
// copy.
var ranges = map[string]Range{
	WeightKg:     {WeightKg, "kg", 20, 500},
	HeightCm:     {HeightCm, "cm", 50, 300},
	Calories:     {Calories, "kcal", 500, 10_000},
	MealCalories: {MealCalories, "kcal", 0, 10_000},
	ProteinG:     {ProteinG, "g", 0, 500},
	SleepH:       {SleepH, "h", 0, 24},
	Stress:       {Stress, "", 0, 100},
	VO2Max:       {VO2Max, "ml/kg/min", 10, 100},
	HeartRate:    {HeartRate, "bpm", 30, 220},
}

// Lookup returns the range for measure.
func Lookup(measure string) (Range, bool) {
	r, ok := ranges[measure]
	return r, ok
}

// Ranges returns every range, keyed by measure.
func Ranges() map[string]Range {
	out := make(map[string]Range, len(ranges))
	for k, v := range ranges {
		out[k] = v
	}
	return out
}

// Contains reports whether v lies within r. NaN and infinities never do.
func (r Range) Contains(v float64) bool {
	return !math.IsNaN(v) && v >= r.Min && v <= r.Max
}

// CheckValue checks v against measure's range. It returns nil when v is
// fine, and a blocking unsafe_value flag otherwise. An unknown measure is a
// programming error and is reported as blocked too, so a typo can never let
// a write through unchecked.
func CheckValue(field, measure string, v float64) *Flag {
	r, ok := ranges[measure]
	if !ok {
		return &Flag{Type: UnsafeValue, Field: field, Blocked: true,
			Message: fmt.Sprintf("%s could not be checked, so it was not saved.", field)}
	}
	if r.Contains(v) {
		return nil
	}
	return &Flag{Type: UnsafeValue, Field: field, Blocked: true,
		Message: fmt.Sprintf("%s of %s is outside the accepted range %s–%s%s, so it was not saved.",
			field, num(v), num(r.Min), num(r.Max), unit(r.Unit))}
}

// Check runs CheckValue for each field → (measure, value) and returns the
// flags of the values out of range, in the order given.
func Check(values ...Value) []Flag {
	var flags []Flag
	for _, v := range values {
		if f := CheckValue(v.Field, v.Measure, v.V); f != nil {
			flags = append(flags, *f)
		}
	}
	return flags
}

// Value is one number headed for a write.
type Value struct {
	Field   string
	Measure string
	V       float64
}

func num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

func unit(u string) string {
	if u == "" {
		return ""
	}
	return " " + u
}

// CheckArguments is the write guard every tool call passes before its
// body runs (package tools' executor): each argument that measures
// declares (argument name → measure) and args holds is checked against
// its measure's range, by argument name. A value that is not a number,
// or an unknown measure, is blocked too: what cannot be checked is never
// written. Arguments not in args are left to the tool's schema.
func CheckArguments(args json.RawMessage, measures map[string]string) []Flag {
	if len(measures) == 0 {
		return nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(args, &obj); err != nil {
		return []Flag{{Type: UnsafeValue, Blocked: true, Message: "The values could not be checked, so nothing was saved."}}
	}
	var flags []Flag
	for _, field := range slices.Sorted(maps.Keys(measures)) {
		raw, ok := obj[field]
		if !ok || string(raw) == "null" {
			continue
		}
		var v float64
		if err := json.Unmarshal(raw, &v); err != nil {
			flags = append(flags, Flag{Type: UnsafeValue, Field: field, Blocked: true,
				Message: fmt.Sprintf("%s is not a number, so it was not saved.", field)})
			continue
		}
		if f := CheckValue(field, measures[field], v); f != nil {
			flags = append(flags, *f)
		}
	}
	return flags
}
