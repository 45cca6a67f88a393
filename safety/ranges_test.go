package safety

import (
	"math"
	"testing"
)

func TestCheckValueBoundaries(t *testing.T) {
	t.Parallel()
	for measure, r := range Ranges() {
		cases := []struct {
			name string
			v    float64
			ok   bool
		}{
			{"min", r.Min, true},
			{"max", r.Max, true},
			{"below min", r.Min - 0.001, false},
			{"above max", r.Max + 0.001, false},
			{"middle", (r.Min + r.Max) / 2, true},
			{"NaN", math.NaN(), false},
			{"+Inf", math.Inf(1), false},
			{"-Inf", math.Inf(-1), false},
		}
		for _, c := range cases {
			f := CheckValue("x", measure, c.v)
			if got := f == nil; got != c.ok {
				t.Errorf("%s %s (%v): ok = %v, want %v", measure, c.name, c.v, got, c.ok)
			}
			if f != nil && (f.Type != UnsafeValue || !f.Blocked || f.Field != "x") {
				t.Errorf("%s %s: flag = %+v, want a blocking unsafe_value for x", measure, c.name, *f)
			}
		}
	}
}

func TestDesignRanges(t *testing.T) {
	t.Parallel()
	want := map[string][2]float64{
		WeightKg: {20, 500}, HeightCm: {50, 300}, Calories: {500, 10000}, ProteinG: {0, 500},
		SleepH: {0, 24}, Stress: {0, 100}, VO2Max: {10, 100}, HeartRate: {30, 220},
		// Not in the DESIGN table: one meal, from 0 to a day's maximum.
		MealCalories: {0, 10000},
	}
	got := Ranges()
	if len(got) != len(want) {
		t.Fatalf("got %d ranges, want %d", len(got), len(want))
	}
	for m, w := range want {
		if r := got[m]; r.Min != w[0] || r.Max != w[1] {
			t.Errorf("%s: got %v–%v, want %v–%v", m, r.Min, r.Max, w[0], w[1])
		}
	}
}

func TestUnknownMeasureBlocks(t *testing.T) {
	t.Parallel()
	if f := CheckValue("calorie", "calorie", 1000); f == nil || !f.Blocked {
		t.Fatalf("got %v, want a blocking flag for an unknown measure", f)
	}
}

func TestCheckKeepsOrder(t *testing.T) {
	t.Parallel()
	flags := Check(Value{"calories", Calories, 100}, Value{"protein_g", ProteinG, 10}, Value{"protein_g", ProteinG, 900})
	if len(flags) != 2 || flags[0].Field != "calories" || flags[1].Field != "protein_g" {
		t.Fatalf("got %+v, want calories then protein_g flagged", flags)
	}
}

// TestCaloriesPerDayAndPerMeal: the daily range keeps DESIGN §12's floor;
// a meal has none above zero but the same ceiling.
func TestCaloriesPerDayAndPerMeal(t *testing.T) {
	t.Parallel()
	cases := []struct {
		measure string
		v       float64
		ok      bool
	}{
		{Calories, 300, false}, // no day is a 300 kcal day
		{Calories, 499.999, false},
		{Calories, 500, true},
		{Calories, 2200, true},
		{Calories, 10_000, true},
		{Calories, 10_000.001, false},
		{MealCalories, -0.001, false},
		{MealCalories, -5, false},
		{MealCalories, 0, true},
		{MealCalories, 0.5, true},
		{MealCalories, 300, true}, // a snack
		{MealCalories, 499.9, true},
		{MealCalories, 10_000, true},
		{MealCalories, 10_000.001, false},
		{MealCalories, math.NaN(), false},
		{MealCalories, math.Inf(1), false},
	}
	for _, c := range cases {
		f := CheckValue("calories", c.measure, c.v)
		if got := f == nil; got != c.ok {
			t.Errorf("%s %v: ok = %v, want %v (%+v)", c.measure, c.v, got, c.ok, f)
		}
	}
	if f := CheckValue("calories", MealCalories, -1); f == nil || f.Message != "calories of -1 is outside the accepted range 0–10000 kcal, so it was not saved." {
		t.Fatalf("got %+v", f)
	}
}
