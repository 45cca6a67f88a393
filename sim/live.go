package sim

import "github.com/voxgate/voxgate/sim/live"

// GPT-Live lives in sim/live; these names keep its configuration, records
// and endpoints where configs and tests find them.
type (
	// Live configures GPT-Live (live.Config).
	Live = live.Config
	// LiveRule is one scripted turn of a GPT-Live session (live.Rule).
	LiveRule = live.Rule
	// LiveReply is what a LiveRule says or delegates (live.Reply).
	LiveReply = live.Reply
	// LiveStats are one session's counters and records (live.Stats).
	LiveStats = live.Stats
	// LiveLine is one line of a session's transcript (live.Line).
	LiveLine = live.Line
	// LiveApplied is a session update as applied (live.Applied).
	LiveApplied = live.Applied
)

// Endpoint names of GPT-Live in faults and stats.
const (
	EndpointLiveSessions = live.EndpointSessions
	EndpointLiveAttach   = live.EndpointAttach
)

// GPT-Live's own fault kinds.
const (
	FaultExpired            = live.FaultExpired
	FaultSidebandCutAtClose = live.FaultSidebandCutAtClose
	FaultUsageRegress       = live.FaultUsageRegress
)
