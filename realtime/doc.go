// Package realtime is voxgate's side of the OpenAI Realtime API, all of it
// through openai-go:
//   - client secrets: Mint gives a direct-mode app a short-lived secret
//     that carries the whole session config (client.go);
//   - calls: CreateCall places a sideband call for an app's SDP offer with
//     the server key and returns the answer and call id; Hangup ends a
//     call; Session.UpdateEvent is the config the gateway asserts on a
//     call (calls.go);
//   - the sideband: Attach and AttachRetry open the gateway's WebSocket on
//     a live call, whose events Read and Send carry (sideband.go);
//   - GPT-Live: CreateLive creates a live session for an app's offer with
//     client delegation and explicit data-channel allowlists, AttachLive
//     opens its sideband, whose typed events Next reads (the reflected
//     audio skipped undecoded) and whose appends Think, Comment and
//     Instruct send (live.go, livesideband.go);
//   - the relay: Relay joins a phone's WebRTC peer and the gateway's own
//     call to the provider, forwarding Opus RTP and the oai-events channel
//     between them; Network holds the listeners and ICE settings every
//     relayed call of a replica shares (relay*.go);
//   - errors: every provider failure becomes the one error type through
//     the shared classifier, retried only within the caller's deadline
//     (errors.go).
//
// Pointing BaseURL at the simulator or at OpenAI is the only difference
// between development and production.
package realtime
