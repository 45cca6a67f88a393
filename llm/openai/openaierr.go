package openai

import (
	"errors"
	"net/http"
	"time"

	"github.com/openai/openai-go/v3"

	"github.com/voxgate/voxgate/internal/aierr"
	"github.com/voxgate/voxgate/llm"
)

// classifyOpenAI maps an openai-go failure through the one classifier the
// voice side uses too (aierr.OpenAI; the table is in docs/llm.md), and
// keeps the HTTP status for the router's trace. A 400 refusal on safety
// grounds is told apart here: the router must propagate it, never fail it
// over, where any other 400 is a request the provider will not take.
func classifyOpenAI(provider string, err error) *llm.Error {
	c := aierr.OpenAI(err, time.Now())
	e := &llm.Error{Provider: provider, Code: c.Code, Retryable: c.Retryable, RetryAfter: c.RetryAfter, Err: err}
	var apiErr *openai.Error
	if errors.As(err, &apiErr) {
		e.Status = apiErr.StatusCode
		if apiErr.StatusCode == http.StatusBadRequest && contentPolicy(apiErr.Code) {
			e.Code, e.Retryable, e.RetryAfter = llm.ProviderContentFilter, false, 0
		}
	}
	return e
}

// contentPolicy recognizes the codes OpenAI and OpenAI-compatible servers
// (Azure's among them) give a prompt refused by a safety system.
func contentPolicy(code string) bool {
	return code == "content_policy_violation" || code == "content_filter"
}
