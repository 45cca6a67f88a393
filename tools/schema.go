package tools

import (
	"bytes"
	"errors"
	"fmt"
	"math/big"
	"sort"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
)

// noLoader refuses every external $ref, so compiling a schema from config
// never touches the network or the file system.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("external $ref %q is not allowed; inline the schema", url)
}

// compileSchema compiles one schema document. which names it in errors
// ("parameters", "output").
func compileSchema(toolName, which string, doc []byte) (*jsonschema.Schema, error) {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return nil, broken(which, "not valid JSON: %v", err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(noLoader{})
	loc := "voxgate:///tools/" + toolName + "/" + which + ".json"
	if err := c.AddResource(loc, v); err != nil {
		return nil, broken(which, "%v", err)
	}
	s, err := c.Compile(loc)
	if err != nil {
		return nil, broken(which, "not a valid JSON Schema: %v", err)
	}
	return s, nil
}

// checkParameters enforces what the registry demands of a parameters
// schema beyond being valid: an object at the top, and no property that
// names the user anywhere in it.
func checkParameters(doc []byte) error {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return broken("parameters", "not valid JSON: %v", err)
	}
	top, ok := v.(map[string]any)
	if !ok || top["type"] != "object" {
		return broken("parameters", `must be a schema with "type": "object"`)
	}
	if path := findUserParam(v, "parameters"); path != "" {
		return broken(path, "the user's id is never a tool parameter; the executor passes the authenticated user")
	}
	return nil
}

// findUserParam walks a schema and returns the path of the first property
// that would let the model name a user, or "".
func findUserParam(v any, path string) string {
	switch n := v.(type) {
	case map[string]any:
		if props, ok := n["properties"].(map[string]any); ok {
			for _, name := range sortedKeys(props) {
				if isUserKey(name) {
					return path + ".properties." + name
				}
			}
		}
		for _, k := range sortedKeys(n) {
			if p := findUserParam(n[k], path+"."+k); p != "" {
				return p
			}
		}
	case []any:
		for i, e := range n {
			if p := findUserParam(e, fmt.Sprintf("%s[%d]", path, i)); p != "" {
				return p
			}
		}
	}
	return ""
}

func isUserKey(name string) bool {
	k := strings.ToLower(strings.NewReplacer("_", "", "-", "", " ", "").Replace(name))
	return k == "userid" || k == "uid" || k == "user" || k == "userident" || k == "owner" || k == "ownerid"
}

func sortedKeys(m map[string]any) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// describeValidation turns a schema failure into one short sentence per
// problem that names the argument and the rule it broke, for the caller,
// the model and the logs. It never echoes an argument's value, nor its
// length: arguments carry health data (a weight, an allergy), and the
// schema library's own messages quote them ("got 731.5, want 500"), so
// every message is written here from the schema's side alone.
func describeValidation(err error) string {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return "The arguments do not match the tool's schema."
	}
	var msgs []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			msgs = append(msgs, leafMessage(e))
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	sort.Strings(msgs)
	msgs = dedupe(msgs)
	if len(msgs) > 5 {
		msgs = append(msgs[:5], fmt.Sprintf("and %d more", len(msgs)-5))
	}
	return "Invalid arguments: " + strings.Join(msgs, "; ") + "."
}

// leafMessage is one problem. Only the schema's side of a rule (a type, a
// limit, a required name) and the argument's path appear in it.
func leafMessage(e *jsonschema.ValidationError) string {
	where := "arguments"
	if len(e.InstanceLocation) > 0 {
		where = strings.Join(e.InstanceLocation, ".")
	}
	switch k := e.ErrorKind.(type) {
	case *kind.Required:
		return "missing required " + quoteList(k.Missing)
	case *kind.DependentRequired:
		return "missing required " + quoteList(k.Missing) + " (needed with " + strconv.Quote(k.Prop) + ")"
	case *kind.Dependency:
		return "missing required " + quoteList(k.Missing) + " (needed with " + strconv.Quote(k.Prop) + ")"
	case *kind.AdditionalProperties:
		return "unknown " + quoteList(k.Properties)
	case *kind.Type:
		return where + " must be of type " + strings.Join(k.Want, " or ")
	case *kind.Enum, *kind.Const:
		return where + " has a value that is not allowed"
	case *kind.Pattern:
		return where + " does not match the required pattern"
	case *kind.Format:
		return where + " is not a valid " + k.Want
	case *kind.MinLength:
		return fmt.Sprintf("%s must be at least %d characters long", where, k.Want)
	case *kind.MaxLength:
		return fmt.Sprintf("%s must be at most %d characters long", where, k.Want)
	case *kind.Minimum:
		return where + " must be at least " + ratString(k.Want)
	case *kind.Maximum:
		return where + " must be at most " + ratString(k.Want)
	case *kind.ExclusiveMinimum:
		return where + " must be greater than " + ratString(k.Want)
	case *kind.ExclusiveMaximum:
		return where + " must be less than " + ratString(k.Want)
	case *kind.MultipleOf:
		return where + " must be a multiple of " + ratString(k.Want)
	case *kind.MinItems:
		return fmt.Sprintf("%s must have at least %d items", where, k.Want)
	case *kind.MaxItems:
		return fmt.Sprintf("%s must have at most %d items", where, k.Want)
	case *kind.MinProperties:
		return fmt.Sprintf("%s must have at least %d properties", where, k.Want)
	case *kind.MaxProperties:
		return fmt.Sprintf("%s must have at most %d properties", where, k.Want)
	case *kind.UniqueItems:
		return where + " must not repeat an item"
	}
	// Any other rule is named by its keyword; the library's own message
	// may quote the value.
	kw := "schema"
	if p := e.ErrorKind.KeywordPath(); len(p) > 0 {
		kw = p[len(p)-1]
	}
	return where + " breaks the schema's " + kw + " rule"
}

// ratString writes a schema limit as the schema would: 500, 0.5.
func ratString(r *big.Rat) string {
	if r.IsInt() {
		return r.Num().String()
	}
	f, _ := r.Float64()
	return strconv.FormatFloat(f, 'g', -1, 64)
}

func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}

func dedupe(s []string) []string {
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}
