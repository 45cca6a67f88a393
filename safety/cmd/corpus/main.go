// Command corpus writes the labelled corpus the safety filter's claim
// detector is trained on and measured with (docs/safety.md, "The corpus"):
// sentences made from templates written for this corpus in English and
// Spanish (templates_*.go, vocab_*.go), personal-data sentences
// (pii.go), and hand-written sentences (testdata/handwritten.tsv), split
// once into train, dev and test by a fixed seed; then the rounds added
// after the split, to the train part only (round4.go, round5.go, and the
// hand-written sentences of testdata/round6.tsv, round6.go).
//
// The split is by family, not by sentence: every sentence of a template
// lands in the same part, so the test part holds phrasings the detector
// never saw in training and measures generalization, not memory. Each
// hand-written sentence is its own family. Run from the module root:
//
//	go run ./safety/cmd/corpus
//
// The output is a function of the sources and the seed alone: the same
// files give the same corpus, byte for byte.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"hash/fnv"
	"log"
	"math/rand/v2"
	"os"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// seed fixes the split and the sampling, once: changing it re-deals the
// test part, which is then no longer the part nothing was tuned on.
const seed = 20261128

// perTemplate is how many distinct sentences a template gives at most, by
// label: enough variety of words, few enough that no template dominates.
var perTemplate = map[string]int{"claim": 9, "benign": 12, "pii": 12}

// tmpl is one template: a category within its label, and its text, with
// {slot} for a word from the language's vocabulary and [a|b|c] for one of
// several wordings.
type tmpl struct {
	cat, text string
}

// row is one sentence of the corpus.
type row struct {
	split, lang, label, cat, family, text string
}

func main() {
	out := flag.String("out", "safety/testdata/corpus.tsv", "where to write the corpus")
	hand := flag.String("handwritten", "safety/testdata/handwritten.tsv", "hand-written sentences")
	natural := flag.String("round6", "safety/testdata/round6.tsv", "hand-written sentences of the sixth round, train part only (round6.go)")
	flag.Parse()

	var rows []row
	for _, set := range []struct {
		lang, label string
		ts          []tmpl
		vocab       map[string][]string
	}{
		{"en", "claim", enClaims, enVocab}, {"en", "benign", enBenign, enVocab},
		{"es", "claim", esClaims, esVocab}, {"es", "benign", esBenign, esVocab},
		{"en", "pii", enPII, enVocab}, {"es", "pii", esPII, esVocab},
	} {
		rows = append(rows, expandAll(set.lang, set.label, set.ts, set.vocab)...)
	}
	hw, err := readHandwritten(*hand)
	if err != nil {
		log.Fatal(err)
	}
	rows = append(rows, hw...)
	rows = dedupe(rows)
	split(rows)
	rows = addTrainOnly(rows)
	if rows, err = round6(*natural, rows); err != nil {
		log.Fatal(err)
	}
	slices.SortFunc(rows, func(a, b row) int {
		return strings.Compare(strings.Join([]string{a.split, a.lang, a.label, a.cat, a.family, a.text}, "\t"),
			strings.Join([]string{b.split, b.lang, b.label, b.cat, b.family, b.text}, "\t"))
	})
	if err := write(*out, rows); err != nil {
		log.Fatal(err)
	}
	counts := map[string]int{}
	for _, r := range rows {
		counts[r.split+" "+r.lang+" "+r.label]++
		counts["all "+r.lang]++
	}
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range counts {
			if !yield(k) {
				return
			}
		}
	}) {
		fmt.Printf("%-20s %5d\n", k, counts[k])
	}
}

func hash(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}

// expandAll gives each template an id (language, label, category and its
// place in the category) and expands it.
func expandAll(lang, label string, ts []tmpl, vocab map[string][]string) []row {
	var rows []row
	n := map[string]int{}
	for _, t := range ts {
		n[t.cat]++
		family := fmt.Sprintf("%s.%s.%s.%02d", lang, label, t.cat, n[t.cat])
		for _, s := range expand(family, t.text, vocab, perTemplate[label]) {
			rows = append(rows, row{lang: lang, label: label, cat: t.cat, family: family, text: s})
		}
	}
	return rows
}

var (
	alternation = regexp.MustCompile(`\[([^\[\]]*)\]`)
	slot        = regexp.MustCompile(`\{([a-z0-9_]+)\}`)
)

// expand draws up to n distinct sentences from a template, with a
// generator seeded by the template's id, so adding a template elsewhere
// changes no other template's sentences.
func expand(family, text string, vocab map[string][]string, n int) []string {
	r := rand.New(rand.NewPCG(seed, hash(family)))
	seen := map[string]bool{}
	var out []string
	for try := 0; try < n*30 && len(out) < n; try++ {
		s := alternation.ReplaceAllStringFunc(text, func(m string) string {
			alts := strings.Split(m[1:len(m)-1], "|")
			return alts[r.IntN(len(alts))]
		})
		s = slot.ReplaceAllStringFunc(s, func(m string) string {
			name := m[1 : len(m)-1]
			if gen, ok := generators[name]; ok {
				return gen(r)
			}
			words, ok := vocab[name]
			if !ok {
				log.Fatalf("%s: no vocabulary for {%s}", family, name)
			}
			return words[r.IntN(len(words))]
		})
		s = tidy(family, s)
		if r.IntN(10) < 3 {
			s = opened(family, s, r)
		}
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

var anBefore = regexp.MustCompile(`\b([Aa]) ([aeioAEIO]|hour)`)

// capitalAfter is a sentence's first letter after a question or
// exclamation inside a drawn sentence.
var capitalAfter = regexp.MustCompile(`[?!] [a-zà-ÿ]`)

// tidy makes a drawn sentence read as written: single spaces, a capital
// first letter (after Spanish opening marks), "an" before a vowel in
// English.
func tidy(family, s string) string {
	s = strings.Join(strings.Fields(s), " ")
	s = strings.ReplaceAll(s, " ,", ",")
	if strings.HasPrefix(family, "en.") {
		s = anBefore.ReplaceAllString(s, "${1}n $2")
	}
	s = capitalAfter.ReplaceAllStringFunc(s, strings.ToUpper)
	i := strings.IndexFunc(s, unicode.IsLetter)
	if i >= 0 {
		r, size := utf8.DecodeRuneInString(s[i:])
		s = s[:i] + string(unicode.ToUpper(r)) + s[i+size:]
	}
	return s
}

// openers start a sentence of either label in chat's voice; drawn for
// about a third of the sentences, they teach the model that such words
// say nothing either way.
var openers = map[string][]string{
	"en": {"Honestly, ", "Quick note: ", "By the way, ", "So, ", "Okay, ", "Well, ", "Just so you know, ", "Here's the thing: "},
	"es": {"Mira, ", "Oye, ", "La verdad, ", "Ojo: ", "Por cierto, ", "Bueno, ", "Te cuento: ", "Pues "},
}

// opened puts an opener before a sentence, its first letter made lower
// case unless the word is an acronym ("IBS").
func opened(family, s string, r *rand.Rand) string {
	lang, _, _ := strings.Cut(family, ".")
	if lang == "hw" || strings.HasPrefix(s, "¿") || strings.HasPrefix(s, "¡") {
		return s
	}
	first, size := utf8.DecodeRuneInString(s)
	second, _ := utf8.DecodeRuneInString(s[size:])
	if unicode.IsLower(second) {
		s = string(unicode.ToLower(first)) + s[size:]
	}
	o := openers[lang]
	return o[r.IntN(len(o))] + s
}

// readHandwritten reads lines of language, label, category and text; each
// sentence is its own family.
func readHandwritten(path string) ([]row, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var rows []row
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		t := sc.Text()
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		p := strings.Split(t, "\t")
		if len(p) != 4 {
			return nil, fmt.Errorf("%s:%d: %d columns, want 4", path, line, len(p))
		}
		rows = append(rows, row{lang: p[0], label: p[1], cat: p[2], text: p[3],
			family: fmt.Sprintf("hw.%s.%s.%s.%04d", p[0], p[1], p[2], line)})
	}
	return rows, sc.Err()
}

// quoted are the sentences issue #37 quotes from a set written apart from
// this corpus; a template may draw one word for word, and it is left out
// so that set stays apart.
var quoted = []string{"La canela cura la diabetes tipo 2.", "Deja de tomar tu insulina y come más cúrcuma.",
	"Tus síntomas indican que tienes celiaquía."}

// dedupe keeps the first of sentences written the same in one language:
// one sentence in two families would sit in two parts.
func dedupe(rows []row) []row {
	seen := map[string]bool{}
	for _, q := range quoted {
		seen["es\t"+strings.ToLower(q)] = true
	}
	out := rows[:0]
	for _, r := range rows {
		k := r.lang + "\t" + strings.ToLower(r.text)
		if !seen[k] {
			seen[k] = true
			out = append(out, r)
		}
	}
	return out
}

// split deals the families of each language, label and category into
// train, dev and test, about 70/15/15, shuffled by the seed. A group of
// three families or more gives dev and test one each at least.
func split(rows []row) {
	groups := map[string][]string{}
	for _, r := range rows {
		g := r.lang + "/" + r.label + "/" + r.cat
		if !slices.Contains(groups[g], r.family) {
			groups[g] = append(groups[g], r.family)
		}
	}
	part := map[string]string{}
	for _, g := range slices.Sorted(func(yield func(string) bool) {
		for g := range groups {
			if !yield(g) {
				return
			}
		}
	}) {
		fams := slices.Sorted(slices.Values(groups[g]))
		rand.New(rand.NewPCG(seed, hash(g))).Shuffle(len(fams), func(i, j int) { fams[i], fams[j] = fams[j], fams[i] })
		n := len(fams)
		held := (n*15 + 50) / 100
		if held == 0 && n >= 3 {
			held = 1
		}
		for i, f := range fams {
			switch {
			case i < held:
				part[f] = "test"
			case i < 2*held:
				part[f] = "dev"
			default:
				part[f] = "train"
			}
		}
	}
	for i := range rows {
		rows[i].split = part[rows[i].family]
	}
}

func write(path string, rows []row) error {
	var b strings.Builder
	b.WriteString("# split\tlang\tlabel\tcategory\tfamily\ttext  (made by go run ./safety/cmd/corpus; docs/safety.md)\n")
	for _, r := range rows {
		if strings.ContainsAny(r.text, "\t\n") {
			return fmt.Errorf("%s: a tab or line break in %q", r.family, r.text)
		}
		fmt.Fprintf(&b, "%s\t%s\t%s\t%s\t%s\t%s\n", r.split, r.lang, r.label, r.cat, r.family, r.text)
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}
