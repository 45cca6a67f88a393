package safety

import (
	"slices"
	"testing"
)

// List fragments (written for this test, not drawn from the corpus): a
// profile or plan echoed back as "label: items" is no claim, in English
// and Spanish, while a claim written as a list item still is; a numbered
// item is one piece with its marker, as a bulleted one is.
func TestListFragments(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		text  string
		claim bool
	}{
		{"current supplements: vitamin d, magnesium. goals: improve sleep.", false},
		{"Goals: lower cholesterol.", false},
		{"Conditions: type 2 diabetes, hypertension.", false},
		{"- supplements: vitamin d, magnesium", false},
		{"- goal: lower blood pressure", false},
		{"Suplementos actuales: vitamina D, magnesio.", false},
		{"Objetivo: bajar el colesterol.", false},
		{"Condiciones: diabetes tipo 2, hipertensión.", false},
		{"Why cinnamon helps:\n- cures diabetes\n- lowers blood pressure\n", true},
		{"Cinnamon:\n1. stops the flu\n2. replaces your insulin\n", true},
		{"- stop taking your blood pressure pills", true},
		{"Goal: get off metformin by eating keto.", true},
		{"- La canela cura la diabetes", true},
		{"1. Deja la insulina.", true},
	} {
		v := CheckText(tc.text, Options{})
		if got := v.Outcome == Blocked; got != tc.claim {
			t.Errorf("%q: blocked %v %v, want %v", tc.text, got, v.Rules, tc.claim)
		}
	}
	for text, want := range map[string][]string{
		"1. Stop the flu\n2. Rest\n": {"1. Stop the flu\n", "2. Rest\n"},
		" 12. Walk daily.":           {" 12. Walk daily."},
		"It costs 5. Then stir.":     {"It costs 5. ", "Then stir."},
		"Step 1. Chop it.":           {"Step 1. ", "Chop it."},
	} {
		if got := Sentences(text); !slices.Equal(got, want) {
			t.Errorf("Sentences(%q) = %q, want %q", text, got, want)
		}
	}
}
