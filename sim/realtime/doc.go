// Package realtime stands in for OpenAI's Realtime API: client secrets,
// WebRTC calls with a real pion peer behind them (the oai-events data
// channel and an audio track that echoes or sends Opus silence), the
// WebSocket transport, sideband sockets on a call, and hang-up. Replies
// come from the script of sim/openai, and every response and input
// transcription is billed to the organization usage there.
//
// What it claims about the real API, and where docs/sim.md ("Realtime")
// cites it: the GA event set and its order (conversation.item.added and
// .done, never the beta .created; response.done when generation ends while
// audio may still play); unknown and beta-shaped fields refused; several
// function calls in one response; invalid_tool_call_id and
// conversation_already_has_active_response; no session.created on a
// sideband attach; fractional transcription seconds; session_expired at
// the maximum session length; sideband sockets that outlive the phone;
// the deterministic token counts ("Counts"); and each fault as the API
// shows it ("Realtime faults"). Choices made where the API's behaviour is
// not established are listed in "Unconfirmed behaviour: the choices made".
//
// The pion helpers (LoopbackSettingEngine, NewOpusAPI) keep every peer on
// loopback in tests ("WebRTC in tests: loopback only", DESIGN §15); the
// GPT-Live surface builds its peers and sinks with them too.
package realtime
