package openai

import (
	"encoding/json"

	"github.com/voxgate/voxgate/sim/schemagen"
)

// SchemaJSON is a JSON value schema accepts (schemagen.JSON): Chat
// Completions' and Responses' structured answers both come from it.
func SchemaJSON(schema json.RawMessage) string { return schemagen.JSON(schema) }
