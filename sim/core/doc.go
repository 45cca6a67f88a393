// package core is what every surface of the simulator shares (Env): the
// keys it accepts, its latency and clock, the fault injector (POST
// /sim/faults), the per-endpoint counters (GET /sim/stats), and OpenAI's
// error shape, which the Chat Completions, Realtime and GPT-Live surfaces
// answer with and the Anthropic and Gemini surfaces translate into their
// own.
//
// What it claims about the real API, and where docs/sim.md cites it:
//   - an error body is {"error":{"message","type","param","code"}} with
//     param and code null when empty, as the spec's ErrorResponse requires,
//     and each error's status, type and code are the API's own ("Chat
//     Completions", "Errors");
//   - a 429 or 503 carries retry-after in seconds, as the API sends it
//     ("Faults");
//   - every answer, errors included, carries an x-request-id; a missing
//     key is 401 and a client secret is refused outside the Realtime
//     surface ("Chat Completions", "Client secrets");
//   - the faults stand for failures users of the real API report: 429s,
//     5xx, timeouts, malformed JSON, streams cut or left without [DONE],
//     slow drips ("Faults", each kind with its source).
//
// The counters and the injector are the simulator's own instruments, not
// claims about the API ("Stats", "Faults").
package core
