// Package gemini stands in for the Gemini API's generateContent and
// streamGenerateContent, as google.golang.org/genai calls them with the
// Gemini API backend and its base URL pointed at the simulator. A request
// is translated into the Chat Completions engine of sim/openai, so the
// same scripts, token counts, prompt cache and faults answer it, and the
// answer is rendered in Gemini's shape.
//
// What it claims about the real API, and where docs/sim.md ("Gemini
// generateContent") cites it: the routes and the key in x-goog-api-key
// (genai's request building); the request's contents, tools and
// function-calling config; usageMetadata with cached and thinking tokens;
// the SSE stream genai reads; the error shape {"error":{code, message,
// status}} with its RESOURCE_EXHAUSTED, UNAVAILABLE and INVALID_ARGUMENT;
// and each fault as the API shows it. Everything it sends decodes with
// genai's types.
package gemini
