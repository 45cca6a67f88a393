package sim_test

import (
	"testing"

	"github.com/voxgate/voxgate/sim/simtest"
)

// TestSpecExamples checks the validator against the spec's own examples of
// the objects the sim emits, so a validator bug cannot hide a sim bug.
func TestSpecExamples(t *testing.T) {
	t.Parallel()
	spec := simtest.Spec(t)
	tests := []struct {
		name, schema, json string
		wantErr            bool
	}{
		{"completion example", "CreateChatCompletionResponse", `{"id":"chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG","object":"chat.completion","created":1741570283,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"message":{"role":"assistant","content":"The image","refusal":null,"annotations":[]},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":1117,"completion_tokens":46,"total_tokens":1163,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}},"service_tier":"default","system_fingerprint":"fp_fc9f1d7035"}`, false},
		{"chunk example", "CreateChatCompletionStreamResponse", `{"id":"chatcmpl-123","object":"chat.completion.chunk","created":1694268190,"model":"gpt-4o-mini", "system_fingerprint": "fp_44709d6fcb", "choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}],"obfuscation":"r4N7vQ2m"}`, false},
		{"chunk with null usage", "CreateChatCompletionStreamResponse", `{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":null}`, false},
		{"error body", "ErrorResponse", `{"error":{"message":"m","type":"invalid_request_error","param":null,"code":null}}`, false},
		{"chunk with wrong object", "CreateChatCompletionStreamResponse", `{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[]}`, true},
		{"error without param", "ErrorResponse", `{"error":{"message":"m","type":"t","code":null}}`, true},
		{"finish reason not in enum", "CreateChatCompletionStreamResponse", `{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"done"}]}`, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := spec.Validate(tc.schema, []byte(tc.json))
			if got := err != nil; got != tc.wantErr {
				t.Fatalf("Validate: got error %v, want error %v", err, tc.wantErr)
			}
		})
	}
}
