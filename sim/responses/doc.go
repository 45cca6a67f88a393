// package responses stands in for OpenAI's Responses API (POST
// /v1/responses, GET and DELETE /v1/responses/{id}, GET
// /v1/responses/{id}/input_items), streaming and not, as openai-go's
// responses package calls it. A request is translated into the Chat
// Completions engine of sim/openai, so the same scripts, token counts,
// prompt cache, time to first token and faults answer it, and the answer
// is rendered as a Response object or its typed event stream.
//
// What it claims about the real API, and where docs/sim.md ("Responses
// API") cites it: the request's names (the spec's CreateResponse; others
// refused as unknown_parameter), input as a string or items, the pairing
// of function_call and function_call_output, instructions not carried
// over by previous_response_id, the Response object's fields and the
// stream's events in order with sequence_number, max_output_tokens
// covering reasoning and visible output (incomplete, reason
// max_output_tokens), reasoning items and reasoning_tokens from reasoning
// models, stored responses per API key (404 for another key's id), and
// each fault as the API shows it. What it does not serve (built-in tools,
// background mode, conversations, stored prompts) it refuses by name.
// Everything it sends validates against the spec's schemas and decodes
// with openai-go's types.
package responses
