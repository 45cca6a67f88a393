// Package modelname reads provider model names: a dated snapshot
// (OpenAI's gpt-realtime-2025-08-28, Anthropic's
// claude-sonnet-4-5-20250929) belongs to its family (gpt-realtime), and
// whatever the gateway knows of a family (its price, its shutdown date,
// how to call it) holds for its snapshots unless the snapshot is listed
// itself.
package modelname

import (
	"regexp"
	"strings"
)

// snapshotRE matches a dated snapshot name and captures its family.
var snapshotRE = regexp.MustCompile(`^(.+)-(?:\d{4}-\d{2}-\d{2}|\d{8})$`)

// Family is the family of a dated snapshot name, and ok false for a name
// that is not one.
func Family(name string) (family string, ok bool) {
	sub := snapshotRE.FindStringSubmatch(name)
	if sub == nil {
		return "", false
	}
	return sub[1], true
}

// Lookup finds name in m: the name itself, else its family when name is a
// dated snapshot.
func Lookup[V any](m map[string]V, name string) (V, bool) {
	if v, ok := m[name]; ok {
		return v, true
	}
	if fam, ok := Family(name); ok {
		v, ok := m[fam]
		return v, ok
	}
	var zero V
	return zero, false
}

// Rerouted reports an answer by another model than the one asked: neither
// that model nor a version of it (its name, a hyphen and a suffix: a dated
// snapshot, or a provider's version tag such as Gemini's -001). An empty
// answer names no model and is no re-route. Google re-routes retired
// Gemini models so, silently (models.md).
func Rerouted(asked, answered string) bool {
	return answered != "" && answered != asked && !strings.HasPrefix(answered, asked+"-")
}
