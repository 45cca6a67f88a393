package hooks

import (
	"encoding/json"
	"strings"
)

// Profile is what the seed's context builder reads of user_profiles: the
// language and measurement system every answer keeps to, the dietary
// restrictions and allergies every search and recipe respects, and the
// kitchen equipment a generated recipe may use.
type Profile struct {
	Language  string   `json:"language"` // en | es
	Units     string   `json:"units"`    // metric | imperial
	Diet      []string `json:"diet"`
	Allergies []string `json:"allergies"`
	Equipment []string `json:"equipment"`
}

// profileFor is the sample's profile of a user: Spanish and metric for ids
// starting "es-", allergic to peanuts for ids starting "nut-", to kiwi
// (which the allergen map lacks: searches fail closed) for "kiwi-", else
// English and imperial with no restrictions.
func profileFor(userID string) Profile {
	p := Profile{Language: "en", Units: "imperial", Diet: []string{}, Allergies: []string{}, Equipment: []string{"stovetop", "oven"}}
	switch {
	case strings.HasPrefix(userID, "es-"):
		p.Language, p.Units = "es", "metric"
	case strings.HasPrefix(userID, "nut-"):
		p.Allergies = []string{"peanuts"}
	case strings.HasPrefix(userID, "kiwi-"):
		p.Allergies = []string{"kiwi"}
	}
	return p
}

// userContext answers the context tool. voxgate puts its language, diet,
// allergies and units in the model's instructions (as data) for every
// text turn and voice session; the rest (equipment) reaches the model
// when it calls the tool itself.
func userContext(_ *Server, userID string, _ json.RawMessage) (any, error) {
	return profileFor(userID), nil
}
