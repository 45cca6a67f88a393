// Package live stands in for GPT-Live: WebRTC sessions created with POST
// /v1/live/sessions, the sideband attached at
// /v1/live/sessions/{id}/attach, the voice model's turns and its
// delegations to the client, cumulative usage and the close. It speaks
// over the peers and sinks of sim/realtime, takes its words from the
// script of sim/openai, and bills each session's time there when it
// closes.
//
// What it claims about the real API, and where docs/sim.md ("GPT-Live")
// cites it, against openai-go's live package (SDK) and
// ../shared/reference/gpt-live.md (ref): the create's config, its
// refusals and its 201 ("Create"); no client-secret flow; the sideband's
// events and commands ("Sideband", "Commands"); data-channel allowlists;
// client delegation and its acknowledgement delay ("The session clock,
// turns and delegations"); usage.seconds cumulative, session.closed with
// its reasons, and the 15 s start charge ("Usage, close and billing");
// and each fault as the API shows it ("Live faults"). What the guides
// leave open is marked there as the simulator's choice.
package live
