package demo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/voxgate/voxgate/tools"
)

// Profile is a user's profile row.
type Profile struct {
	Exists       bool            `json:"exists"`
	DisplayName  string          `json:"display_name"`
	Diet         string          `json:"diet"`
	Allergies    []string        `json:"allergies"`
	Language     string          `json:"language"`
	Units        string          `json:"units"`
	Goals        json.RawMessage `json:"goals"`
	FitnessLevel string          `json:"fitness_level"`
}

const profileSQL = `SELECT display_name, diet, allergies, language, units, goals, fitness_level
FROM demo.profiles WHERE user_id = $1`

// profile reads the user's profile; a user without one gets the defaults
// (no diet, no allergies), which is also what the column defaults say.
func (d *app) profile(ctx context.Context, userID string) (Profile, error) {
	p := Profile{Exists: true}
	err := d.db.QueryRow(ctx, profileSQL, userID).
		Scan(&p.DisplayName, &p.Diet, &p.Allergies, &p.Language, &p.Units, &p.Goals, &p.FitnessLevel)
	if errors.Is(err, pgx.ErrNoRows) {
		return Profile{Diet: "none", Allergies: []string{}, Language: "en", Units: "metric",
			Goals: json.RawMessage(`{}`), FitnessLevel: "beginner"}, nil
	}
	if err != nil {
		return Profile{}, fmt.Errorf("demo: read profile: %w", err)
	}
	if p.Allergies == nil {
		p.Allergies = []string{}
	}
	return p, nil
}

func (d *app) getProfileTool() *tools.Tool {
	return &tools.Tool{
		Name: "get_profile",
		Description: "Get the user's profile: diet, allergies, language, units, goals and fitness level. " +
			"Use it to personalise answers.",
		Parameters: json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`),
		Voice:      true, MaxTokens: 300,
		Run: func(ctx context.Context, inv tools.Invocation) (tools.Outcome, error) {
			p, err := d.profile(ctx, inv.UserID)
			if err != nil {
				return tools.Outcome{}, err
			}
			// The model never gets the display name: the output filter
			// rejects provider text that contains it (DESIGN §12), and the
			// model has no need to say it.
			model := map[string]any{"exists": p.Exists, "diet": p.Diet, "allergies": p.Allergies,
				"language": p.Language, "units": p.Units, "goals": p.Goals, "fitness_level": p.FitnessLevel}
			card, err := tools.NewCard("profile", p)
			if err != nil {
				return tools.Outcome{}, err
			}
			return tools.Outcome{Data: p, Model: model, Cards: []tools.Card{card}}, nil
		},
	}
}
