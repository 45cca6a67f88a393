package sim

import "github.com/voxgate/voxgate/sim/core"

// The fault injector and the counters live in sim/core, shared by every
// surface; these names keep the simulator's API where its users find it.

type (
	// Fault is one fault to inject (core.Fault).
	Fault = core.Fault
	// FaultKind names a fault (core.FaultKind).
	FaultKind = core.FaultKind
	// Stats are the per-endpoint counters of GET /sim/stats (core.Stats).
	Stats = core.Stats
	// EndpointStats are one endpoint's counters (core.EndpointStats).
	EndpointStats = core.EndpointStats
	// APIError is an error in the API's own shape (core.APIError).
	APIError = core.APIError
)

// AnyEndpoint scopes a fault to every endpoint that supports its kind.
const AnyEndpoint = core.AnyEndpoint

// The fault kinds every surface shares; each surface's own are beside it.
const (
	FaultRateLimit        = core.FaultRateLimit
	FaultQuota            = core.FaultQuota
	FaultServerError      = core.FaultServerError
	FaultUnavailable      = core.FaultUnavailable
	FaultTimeout          = core.FaultTimeout
	FaultMalformedJSON    = core.FaultMalformedJSON
	FaultCutStream        = core.FaultCutStream
	FaultSlowDrip         = core.FaultSlowDrip
	FaultStreamError      = core.FaultStreamError
	FaultContextLength    = core.FaultContextLength
	FaultContentFilter    = core.FaultContentFilter
	FaultReset            = core.FaultReset
	FaultNoDone           = core.FaultNoDone
	FaultSlowStart        = core.FaultSlowStart
	FaultSDPReject        = core.FaultSDPReject
	FaultDataChannelClose = core.FaultDataChannelClose
	FaultSidebandDrop     = core.FaultSidebandDrop
	FaultNoResponse       = core.FaultNoResponse
)
