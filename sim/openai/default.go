package openai

import (
	"encoding/json"
	"regexp"
	"strings"
	"unicode"
)

// The default behaviour plays a plausible assistant so `voxgate dev` shows
// the whole tool loop without any script: on a user turn it calls the offered
// tool that best matches the message, and once tool results are present it
// answers in text. It never echoes tool output or user text, which may hold
// personal data the gateway's output filters would (rightly) flag.

func (cs *CompiledScript) defaultReply(req *ChatRequest, t *turn) Answer {
	mode := req.Choice.Mode
	if mode == "none" || len(req.Tools) == 0 {
		return Answer{Text: cs.answerText(t)}
	}
	if len(t.results) > 0 && mode == "auto" {
		return Answer{Text: cs.answerText(t)}
	}
	var tool *ChatTool
	if mode == "function" {
		tool = req.Tool(req.Choice.Name)
	} else {
		var score int
		tool, score = bestTool(req.Tools, t.lastUser)
		if score == 0 && mode == "auto" {
			return Answer{Text: cs.answerText(t)}
		}
	}
	args := buildArguments(tool, t.lastUser)
	return Answer{Calls: []ToolCall{{Name: tool.Function.Name, Arguments: args}}}
}

// answerText is the text answer: a short wrap-up after tool results, the
// script's default text otherwise.
func (cs *CompiledScript) answerText(t *turn) string {
	if len(t.results) == 0 {
		return cs.text
	}
	names := strings.Join(t.toolNames, " and ")
	if names == "" {
		names = "the tool"
	}
	for _, r := range t.results {
		if looksLikeError(r.Text) {
			return "Sorry, " + names + " didn't work this time. Please try again in a moment."
		}
	}
	return "Here's what I found using " + names + ". Let me know if you'd like anything else."
}

// looksLikeError spots tool results that report a failure: a JSON object with
// an "error" member, or text starting with "error".
func looksLikeError(s string) bool {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(strings.ToLower(s), "error") {
		return true
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal([]byte(s), &obj) != nil {
		return false
	}
	e, ok := obj["error"]
	return ok && string(e) != "null" && string(e) != "false"
}

// synonyms expands words of a user message into words tools are likely to
// use in their names and descriptions. It is tuned for the demo domain (food
// and wellness) but harmless elsewhere.
func synonyms(word string) []string {
	switch word {
	case "find", "look", "show", "suggest", "search", "any", "idea", "ideas":
		return []string{"search", "find", "recommend"}
	case "recipe", "cook", "cooking", "make", "dish", "pasta", "bake":
		return []string{"recipe", "search"}
	case "had", "ate", "eat", "eaten", "drank", "log", "track", "record":
		return []string{"log", "meal", "record"}
	case "breakfast", "lunch", "dinner", "snack", "meal":
		return []string{"meal"}
	case "workout", "exercise", "training", "train", "gym", "run", "running", "fitness":
		return []string{"workout", "exercise", "recommend"}
	case "profile", "allergy", "allergie", "allergic", "diet", "preference", "goal":
		return []string{"profile"}
	case "many", "much", "average", "total", "week", "month", "data", "history":
		return []string{"query", "data"}
	}
	return nil
}

// bestTool scores each tool by the overlap between the message's words (and
// their synonyms) and the tool's name (weight 3) and description (weight 1).
// Ties go to the first tool offered.
func bestTool(tools []ChatTool, message string) (*ChatTool, int) {
	// Markup a gateway wraps the user's text in ("<user_message>") is not
	// what the user asked for: a model reads the text inside it.
	message = markupTag.ReplaceAllString(message, " ")
	want := map[string]bool{}
	for _, w := range words(message) {
		want[w] = true
		for _, s := range synonyms(w) {
			want[s] = true
		}
	}
	best, bestScore := &tools[0], 0
	for i := range tools {
		f := &tools[i].Function
		score := 0
		for _, w := range uniq(words(f.Name)) {
			if want[w] {
				score += 3
			}
		}
		for _, w := range uniq(words(f.Description)) {
			if want[w] {
				score++
			}
		}
		if score > bestScore {
			best, bestScore = &tools[i], score
		}
	}
	return best, bestScore
}

// markupTag is an XML-like tag such as <user_message> or </user_message>.
var markupTag = regexp.MustCompile(`</?[A-Za-z_][A-Za-z0-9_-]*>`)

// words splits text into lower-case words, splitting identifiers on '_',
// '-' and camelCase, with a crude plural strip ("recipes" -> "recipe").
func words(s string) []string {
	var out []string
	var b strings.Builder
	flush := func() {
		if b.Len() == 0 {
			return
		}
		w := b.String()
		b.Reset()
		if len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") {
			w = w[:len(w)-1]
		}
		out = append(out, w)
	}
	prevLower := false
	for _, r := range s {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if unicode.IsUpper(r) && prevLower {
				flush()
			}
			prevLower = unicode.IsLower(r)
			b.WriteRune(unicode.ToLower(r))
		default:
			prevLower = false
			flush()
		}
	}
	flush()
	return out
}

func uniq(ws []string) []string {
	out := ws[:0:0]
	for _, w := range ws {
		if !Contains(out, w) {
			out = append(out, w)
		}
	}
	return out
}
