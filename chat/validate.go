package chat

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/config"
)

//go:embed response.schema.json
var responseSchemaDoc []byte

// responseSchema is the compiled response.schema.json.
type responseSchema struct{ s *jsonschema.Schema }

func compileResponseSchema() (*responseSchema, error) {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(responseSchemaDoc))
	if err != nil {
		return nil, fmt.Errorf("chat: response schema: %w", err)
	}
	c := jsonschema.NewCompiler()
	const loc = "voxgate:///chat/response.schema.json"
	if err := c.AddResource(loc, v); err != nil {
		return nil, fmt.Errorf("chat: response schema: %w", err)
	}
	s, err := c.Compile(loc)
	if err != nil {
		return nil, fmt.Errorf("chat: response schema: %w", err)
	}
	return &responseSchema{s}, nil
}

// validate checks r, as JSON, against the schema. What breaks it came
// from the model or a tool, so it is AI_VALIDATION_ERROR, never a crash;
// the cause is logged, not sent.
func (rs *responseSchema) validate(r *Response) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = apierr.Wrap(apierr.AIValidation, "", fmt.Errorf("chat: response validation panicked: %v", p))
		}
	}()
	raw, err := json.Marshal(r)
	if err != nil {
		return apierr.Wrap(apierr.AIValidation, "", err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return apierr.Wrap(apierr.AIValidation, "", err)
	}
	if err := rs.s.Validate(v); err != nil {
		// Only the location is kept: the library's message quotes the
		// offending value, which is model output and must not be logged.
		where := "/"
		var ve *jsonschema.ValidationError
		if errors.As(err, &ve) && len(ve.Causes) > 0 {
			for ve = ve.Causes[0]; len(ve.Causes) > 0; ve = ve.Causes[0] {
			}
			where = "/" + strings.Join(ve.InstanceLocation, "/")
		}
		return apierr.Wrap(apierr.AIValidation, "", fmt.Errorf("chat: final response breaks its schema at %s", where))
	}
	return nil
}

// checkDegraded refuses a chat.degraded section whose answer would break
// the response schema (a label, message or category too long, too many
// suggestions): every degraded turn would otherwise fail with
// AI_VALIDATION_ERROR just when the providers are down.
func (rs *responseSchema) checkDegraded(d config.Degraded) error {
	r := &Response{Version: "1.0", SessionID: "s", MessageID: "m", Message: d.Message, Language: "en",
		Suggestions: degradedSuggestions(d), Degraded: true, Usage: UsageBlock{Plan: "p"}}
	r.nonNil()
	if err := rs.validate(r); err != nil {
		return fmt.Errorf("chat.degraded: %w", errors.Unwrap(err))
	}
	return nil
}
