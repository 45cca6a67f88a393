package config

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

var lineRE = regexp.MustCompile(`^line (\d+): `)

// nameKeys rewrites a YAML decoding error so each message names the dotted
// key it is about (the decoder only gives a line number).
func nameKeys(data []byte, err error) error {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return err
	}
	var root yaml.Node
	if yaml.Unmarshal(data, &root) != nil {
		return err
	}
	keys := map[int]string{}
	walk(&root, "", keys)
	msgs := make([]string, 0, len(te.Errors))
	for _, m := range te.Errors {
		if sub := lineRE.FindStringSubmatch(m); sub != nil {
			n, _ := strconv.Atoi(sub[1])
			if k, ok := keys[n]; ok {
				m = fmt.Sprintf("%s (line %d): %s", k, n, strings.TrimPrefix(m, sub[0]))
			}
		}
		msgs = append(msgs, m)
	}
	return errors.New(strings.Join(msgs, "; "))
}

// walk records, for each line holding a mapping key, its dotted path.
func walk(n *yaml.Node, prefix string, keys map[int]string) {
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			walk(c, prefix, keys)
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			path := k.Value
			if prefix != "" {
				path = prefix + "." + k.Value
			}
			keys[k.Line] = path
			if v.Line != k.Line || v.Kind == yaml.MappingNode || v.Kind == yaml.SequenceNode {
				walk(v, path, keys)
			}
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			p := fmt.Sprintf("%s[%d]", prefix, i)
			if _, ok := keys[c.Line]; !ok {
				keys[c.Line] = p
			}
			walk(c, p, keys)
		}
	}
}
