package tools

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/voxgate/voxgate/internal/apierr"
)

// maxArgDepth bounds nesting: no tool needs more, and deep nesting only
// costs stack in the validator and the database's jsonb parser.
const maxArgDepth = 32

// parseArguments accepts a tool call's arguments as providers send them:
// a JSON string holding a JSON object (OpenAI), a JSON object, or nothing
// for a tool without parameters. It returns the decoded value for schema
// validation and its canonical JSON for storage and the tool body.
func parseArguments(raw json.RawMessage, limit int) (value any, canonical []byte, err error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, nil, invalidArgs("The arguments are not valid JSON.")
		}
		raw = []byte(strings.TrimSpace(s))
	}
	if len(raw) == 0 || string(raw) == "null" {
		raw = []byte("{}")
	}
	if len(raw) > limit {
		return nil, nil, apierr.Errorf(apierr.ToolValidation, "The arguments are larger than %d bytes.", limit)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, nil, invalidArgs("The arguments are not valid JSON.")
	}
	if _, ok := v.(map[string]any); !ok {
		return nil, nil, invalidArgs("The arguments must be a JSON object.")
	}
	if msg := checkValue(v, 0); msg != "" {
		return nil, nil, invalidArgs(msg)
	}
	canonical, err = json.Marshal(v)
	if err != nil {
		return nil, nil, invalidArgs("The arguments are not valid JSON.")
	}
	return v, canonical, nil
}

// checkValue refuses what JSON allows but PostgreSQL's jsonb cannot hold
// (NUL characters) and excessive nesting.
func checkValue(v any, depth int) string {
	if depth > maxArgDepth {
		return "The arguments are nested too deeply."
	}
	switch n := v.(type) {
	case json.Number:
		// Tools work in float64; beyond it the schema library's big.Rat
		// arithmetic can fail (1e1000010 panics it) or crawl.
		if len(n) > 64 {
			return "The arguments contain a number with too many digits."
		}
		if _, err := strconv.ParseFloat(string(n), 64); err != nil {
			return "The arguments contain a number out of range."
		}
	case string:
		if strings.IndexByte(n, 0) >= 0 {
			return "The arguments contain a NUL character."
		}
	case map[string]any:
		for k, e := range n {
			if strings.IndexByte(k, 0) >= 0 {
				return "The arguments contain a NUL character."
			}
			if msg := checkValue(e, depth+1); msg != "" {
				return msg
			}
		}
	case []any:
		for _, e := range n {
			if msg := checkValue(e, depth+1); msg != "" {
				return msg
			}
		}
	}
	return ""
}

func invalidArgs(msg string) error { return apierr.New(apierr.ToolValidation, msg) }

// validate checks v against the tool's schema. The schema library is
// third-party code fed untrusted input; a panic in it is a refusal, not a
// crash.
func validate(t *Tool, v any) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = invalidArgs("The arguments could not be checked.")
		}
	}()
	if err := t.params.Validate(v); err != nil {
		// Not wrapped: the library's error quotes the argument values, and
		// whatever logs this error would write them out.
		return invalidArgs(describeValidation(err))
	}
	return nil
}
