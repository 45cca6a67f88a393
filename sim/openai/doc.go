// Package openai stands in for OpenAI's Chat Completions API, its models
// list (GET /v1/models) and its organization Usage and Costs APIs; and it
// holds the conversation engine the simulator's other surfaces translate
// into: the request in Chat Completions' shape, the scripts and the
// default behaviour that decide the answer, the deterministic token
// counts, the prompt cache, and the price list the organization is billed
// by.
//
// What it claims about the real API, and where docs/sim.md cites it:
//   - the request's parameters are the spec's CreateChatCompletionRequest
//     and the API's own refusals ("Chat Completions", "Errors"); the
//     answer and its stream decode with openai-go and validate against the
//     spec ("Spec fidelity");
//   - per-model behaviour: snapshots, reasoning models' max_tokens and
//     reasoning_effort rules, time to first token, shutdown dates ("Models",
//     "Models and their shutdown dates");
//   - x-ratelimit-* headers ("Rate-limit headers") and cached prompt tokens
//     in 128-token steps from 1,024 ("Cached prompt tokens");
//   - the organization usage and costs, priced with the providers'
//     published prices, not the gateway's table ("Organization usage and
//     costs", "Prices").
//
// The token counts and the scripts are the simulator's own, deterministic
// so billing tests can predict them ("Token counting", "Scripts").
package openai
