package openai

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Script decides what the simulated model answers. Rules are tried in order
// and the first that matches the request (and is compatible with its
// tool_choice) answers; when none does, the default behaviour answers: call
// the best-matching offered tool on a user turn, answer in text once tool
// results are present.
type Script struct {
	Rules []Rule `yaml:"rules" json:"rules,omitempty"`
	// Text is the default plain answer when no rule matches and no tool is
	// called. Empty means a built-in greeting.
	Text string `yaml:"text" json:"text,omitempty"`
}

// Rule is one scripted answer and the requests it applies to.
type Rule struct {
	Name  string `yaml:"name" json:"name,omitempty"`
	When  When   `yaml:"when" json:"when"`
	Reply Reply  `yaml:"reply" json:"reply"`
}

// When matches a request. Every set field must hold; an empty When matches
// every request.
type When struct {
	// Contains matches when the last user message contains any of these
	// strings, ignoring case.
	Contains []string `yaml:"contains" json:"contains,omitempty"`
	// Matches is a Go regular expression tried on the last user message.
	Matches string `yaml:"matches" json:"matches,omitempty"`
	// ToolsOffered lists tool names that must all be in the request's tools.
	ToolsOffered []string `yaml:"tools_offered" json:"tools_offered,omitempty"`
	// ToolResults, when set, requires tool messages after the last user
	// message (true) or none (false).
	ToolResults *bool `yaml:"tool_results" json:"tool_results,omitempty"`
	// Model requires this exact model name.
	Model string `yaml:"model" json:"model,omitempty"`
	// SystemMatches is a Go regular expression tried on the system prompt
	// (every system message, joined by newlines): what an app's gateway
	// put there, such as the page the user is on. Its groups are the
	// reply's {{system.1}}, {{system.2}}, …
	SystemMatches string `yaml:"system_matches" json:"system_matches,omitempty"`
}

// Reply is what a rule answers: text, tool calls, or both (text first, as
// the real API streams it).
type Reply struct {
	// Text may use {{last_user}} (the last user message) and {{tool_names}}
	// (the tools whose results follow the last user message). Text and
	// tool call arguments may use {{system.N}}, group N of
	// When.SystemMatches, as a model reads an id off its prompt.
	Text string `yaml:"text" json:"text,omitempty"`
	// TextTokens, when positive, appends filler text of exactly this many
	// tokens: handy for length limits and benchmarks.
	TextTokens int `yaml:"text_tokens" json:"text_tokens,omitempty"`
	// ToolCalls are called in order, several in one turn when more than one.
	ToolCalls []ScriptCall `yaml:"tool_calls" json:"tool_calls,omitempty"`
}

// ScriptCall is one scripted tool call. Arguments given as an object (or
// any non-string value) are sent as its JSON; a string is sent verbatim, so a
// script can send malformed arguments on purpose.
type ScriptCall struct {
	Name      string `yaml:"name" json:"name"`
	Arguments any    `yaml:"arguments" json:"arguments,omitempty"`
}

// CompiledScript is a Script checked and prepared once at New.
type CompiledScript struct {
	rules []compiledRule
	text  string
}

type compiledRule struct {
	name      string
	text      TextMatch
	offered   []string
	results   *bool
	model     string
	system    *regexp.Regexp
	replyText string
	filler    int
	calls     []ToolCall // arguments already rendered to JSON text
}

const defaultText = "Hi! I'm the voxgate simulator. Ask me to find a recipe, log a meal or suggest a workout."

func CompileScript(s Script) (*CompiledScript, error) {
	cs := &CompiledScript{text: s.Text}
	if cs.text == "" {
		cs.text = defaultText
	}
	for i, r := range s.Rules {
		cr, err := compileRule(r)
		if err != nil {
			return nil, fmt.Errorf("rules[%d] %q: %w", i, r.Name, err)
		}
		cs.rules = append(cs.rules, cr)
	}
	return cs, nil
}

func compileRule(r Rule) (compiledRule, error) {
	cr := compiledRule{name: r.Name, offered: r.When.ToolsOffered, results: r.When.ToolResults,
		model: r.When.Model, replyText: r.Reply.Text, filler: r.Reply.TextTokens}
	var err error
	if cr.text, err = CompileTextMatch(r.When); err != nil {
		return cr, err
	}
	if r.When.SystemMatches != "" {
		if cr.system, err = regexp.Compile(r.When.SystemMatches); err != nil {
			return cr, fmt.Errorf("when.system_matches: %w", err)
		}
	}
	if r.Reply.TextTokens < 0 {
		return cr, errors.New("reply.text_tokens: must not be negative")
	}
	if r.Reply.Text == "" && r.Reply.TextTokens == 0 && len(r.Reply.ToolCalls) == 0 {
		return cr, errors.New("reply: needs text, text_tokens or tool_calls")
	}
	for j, c := range r.Reply.ToolCalls {
		if c.Name == "" {
			return cr, fmt.Errorf("reply.tool_calls[%d]: missing name", j)
		}
		args, err := renderArguments(c.Arguments)
		if err != nil {
			return cr, fmt.Errorf("reply.tool_calls[%d].arguments: %w", j, err)
		}
		cr.calls = append(cr.calls, ToolCall{Name: c.Name, Arguments: args})
	}
	return cr, nil
}

func renderArguments(v any) (string, error) {
	switch a := v.(type) {
	case nil:
		return "{}", nil
	case string:
		return a, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// turn summarises the conversation's tail, which is what scripts match on.
type turn struct {
	system    string // the system messages' text, joined by newlines
	lastUser  string
	results   []ChatMessage // tool messages after the last user message
	toolNames []string      // names of the tools those results answer
}

func newTurn(msgs []ChatMessage) turn {
	var t turn
	last := -1
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == "user" {
			last = i
			t.lastUser = msgs[i].Text
			break
		}
	}
	var system []string
	for _, m := range msgs {
		if m.Role == "system" || m.Role == "developer" {
			system = append(system, m.Text)
		}
	}
	t.system = strings.Join(system, "\n")
	names := map[string]string{} // tool_call_id -> function name
	for _, m := range msgs[last+1:] {
		for _, tc := range m.ToolCalls {
			names[tc.ID] = tc.Function.Name
		}
		if m.Role == "tool" {
			t.results = append(t.results, m)
			if n := names[m.ToolCallID]; n != "" && !Contains(t.toolNames, n) {
				t.toolNames = append(t.toolNames, n)
			}
		}
	}
	return t
}

// Plan picks the reply for a request: the first applicable rule, else the
// default behaviour (JSON under a response_format that asks for it).
func (cs *CompiledScript) Plan(req *ChatRequest) Answer {
	t := newTurn(req.Msgs)
	for i := range cs.rules {
		r := &cs.rules[i]
		if r.applies(req, &t) {
			return r.reply(req, &t)
		}
	}
	ans := cs.defaultReply(req, &t)
	if req.Format.JSON() && len(ans.Calls) == 0 {
		// A rule's text is the script's to fix; the default answer is
		// JSON the format accepts.
		ans.Text = cs.formatAnswer(req.Format, &t)
	}
	return ans
}

func (r *compiledRule) applies(req *ChatRequest, t *turn) bool {
	if r.model != "" && r.model != req.Model {
		return false
	}
	if r.results != nil && *r.results != (len(t.results) > 0) {
		return false
	}
	for _, name := range r.offered {
		if req.Tool(name) == nil {
			return false
		}
	}
	if !r.text.Match(t.lastUser) {
		return false
	}
	if r.system != nil && !r.system.MatchString(t.system) {
		return false
	}
	// A rule must not make the model disobey tool_choice.
	switch req.Choice.Mode {
	case "none":
		return len(r.calls) == 0
	case "required":
		return len(r.calls) > 0
	case "function":
		for _, c := range r.calls {
			if c.Name != req.Choice.Name {
				return false
			}
		}
		return len(r.calls) > 0
	}
	return true
}

func (r *compiledRule) reply(req *ChatRequest, t *turn) Answer {
	text := r.replyText
	if strings.Contains(text, "{{") {
		text = strings.NewReplacer("{{last_user}}", t.lastUser,
			"{{tool_names}}", strings.Join(t.toolNames, ", ")).Replace(text)
	}
	if r.filler > 0 {
		text += filler(r.filler)
	}
	calls := append([]ToolCall(nil), r.calls...)
	if r.system != nil {
		groups := r.system.FindStringSubmatch(t.system)
		text = fillSystem(text, groups, false)
		for i := range calls {
			calls[i].Arguments = fillSystem(calls[i].Arguments, groups, true)
		}
	}
	if !req.parallelCalls() && len(calls) > 1 {
		calls = calls[:1]
	}
	return Answer{Text: text, Calls: calls}
}

// fillSystem replaces {{system.N}} with group N of the system prompt's
// match; in arguments (inJSON) escaped for a JSON string, so that they
// stay JSON whatever the prompt held (a number lands bare in
// `{"id": {{system.1}}}`).
func fillSystem(s string, groups []string, inJSON bool) string {
	if !strings.Contains(s, "{{system.") {
		return s
	}
	var pairs []string
	for i := len(groups) - 1; i >= 1; i-- { // {{system.10}} before {{system.1}}
		v := groups[i]
		if inJSON {
			b, _ := json.Marshal(v)
			v = string(b[1 : len(b)-1])
		}
		pairs = append(pairs, "{{system."+strconv.Itoa(i)+"}}", v)
	}
	return strings.NewReplacer(pairs...).Replace(s)
}

// TextMatch is the part of a When that reads what the user said: shared by
// chat and Realtime rules (the last user message) and Live rules (a turn).
type TextMatch struct {
	contains []string // lower case
	matches  *regexp.Regexp
}

func CompileTextMatch(w When) (TextMatch, error) {
	var m TextMatch
	for _, c := range w.Contains {
		m.contains = append(m.contains, strings.ToLower(c))
	}
	if w.Matches != "" {
		re, err := regexp.Compile(w.Matches)
		if err != nil {
			return m, fmt.Errorf("when.matches: %w", err)
		}
		m.matches = re
	}
	return m, nil
}

// Match reports whether s holds one of contains (ignoring case) and
// matches matches; an empty textMatch matches everything.
func (m TextMatch) Match(s string) bool {
	if len(m.contains) > 0 {
		lower := strings.ToLower(s)
		found := false
		for _, c := range m.contains {
			found = found || strings.Contains(lower, c)
		}
		if !found {
			return false
		}
	}
	return m.matches == nil || m.matches.MatchString(s)
}

// filler returns text of exactly n tokens (4n bytes of ASCII).
func filler(n int) string {
	const word = "sim " // 4 bytes: one token
	return strings.Repeat(word, n)
}

func Contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
