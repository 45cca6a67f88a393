// package anthropic stands in for Anthropic's Messages API (POST
// /v1/messages), streaming and not, as anthropic-sdk-go and the gateway's
// Anthropic adapter call it. A request is translated into the Chat
// Completions engine of sim/openai, so the same scripts, token counts and
// prompt cache answer it, and the answer is rendered in Anthropic's shape.
//
// What it claims about the real API, and where docs/sim.md ("Anthropic
// Messages") cites it: the order of its checks (x-api-key,
// anthropic-version, body, model) and the wording of its 400s; the
// tool-use pairing rule; usage with cache reads and writes reported
// outside input_tokens; the stream's events in order; a model that
// refuses forced tool use; the error shape
// {"type":"error","error":{...}} with 529 overloaded_error; and each fault
// as the API shows it. Everything it sends decodes with the SDK's types.
package anthropic
