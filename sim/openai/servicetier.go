package openai

import (
	"fmt"

	"github.com/voxgate/voxgate/sim/core"
)

// The spec's ServiceTier: what a request may ask, and the tier the
// response names "based on the processing mode actually used".
var serviceTiers = map[string]bool{"auto": true, "default": true, "flex": true, "scale": true, "priority": true, "fast": true}

func checkServiceTier(tier *string) error {
	if tier == nil || serviceTiers[*tier] {
		return nil
	}
	return core.ErrInvalidValue("service_tier",
		fmt.Sprintf("Invalid value: '%s'. Supported values are: 'auto', 'default', 'flex', 'scale', 'priority', and 'fast'.", *tier))
}

// servedTier is the tier the response names for a request asking asked
// (nil: not set) of a project whose configured tier is project: "auto" and
// no tier are the project's; "fast" is answered "priority" (the spec: "the
// response will show service_tier=priority"); "scale" is served on the
// default tier, the simulator's organization having no Scale Tier units.
func servedTier(asked *string, project string) string {
	if asked == nil || *asked == "auto" {
		return project
	}
	switch *asked {
	case "fast", "priority":
		return "priority"
	case "flex":
		return "flex"
	}
	return "default"
}
