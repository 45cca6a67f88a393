// Package sim is a provider simulator: a stand-in for the OpenAI API
// (Chat Completions, the models list, organization usage and costs, the
// Realtime API, GPT-Live), Anthropic's Messages API and the Gemini API's
// generateContent, with fault injection and counters, so the gateway's
// tests, `voxgate dev` and the benchmarks run against it by changing only
// a base URL and a key (DESIGN §14).
//
// This package is the server: Config, New, the route table and the
// control API under /sim/. Each surface lives in a package named for the
// API it stands in for — sim/openai, sim/anthropic, sim/gemini,
// sim/realtime, sim/live — over sim/core, and each package's comment says
// what it claims about the real API. Every claim cites its source in
// docs/sim.md. The simulator imports no gateway package: it is the
// provider's side of every check, so it shares no rule with the code it
// checks.
package sim
