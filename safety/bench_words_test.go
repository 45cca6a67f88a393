package safety

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// This file uses only the filter's exported API, the same in every
// version of the package since the filter began, so bench/compare.sh can
// run it against an earlier commit's filter in the same run
// (docs/safety.md, "Benchmarks").

// thousandWordsText is 1,000 words of answers the filter lets through in
// English and Spanish: meal plans and recipes, numbers, and sentences
// holding risk words (a deferral, blood sugar) that are held and judged.
var thousandWordsText = func() string {
	sentences := []string{
		"Here is a simple plan for the week, built around quick meals and short walks.",
		"Start the day with oats, berries and a spoon of yogurt, about 420 kcal in total.",
		"For lunch, a lentil salad with feta and mint keeps well for three days.",
		"Dinner can be a tray of roasted vegetables with chickpeas and a squeeze of lemon.",
		"Try a 20-minute walk after dinner; many people find it helps them unwind.",
		"Talk to your doctor about whether cinnamon fits with your medication.",
		"This soup is lower in added sugar, which some readers watching their blood sugar appreciate.",
		"Aquí tienes un plan sencillo para la semana, con comidas rápidas y caminatas cortas.",
		"Acompaña las lentejas con arroz integral y una ensalada de nopales para sumar fibra.",
		"Consulta con tu médico si la canela es compatible con tu tratamiento.",
		"Drink water through the day, and keep a snack like almonds in your bag.",
	}
	var b strings.Builder
	for words := 0; words < 1000; {
		for _, s := range sentences {
			for _, w := range strings.Fields(s) {
				if words == 1000 {
					break
				}
				if b.Len() > 0 {
					b.WriteByte(' ')
				}
				b.WriteString(w)
				words++
			}
		}
	}
	return b.String() + "."
}()

// wordTokens cuts text as a model streams it: each word with the space
// before it.
func wordTokens(text string) []string {
	var out []string
	start := 0
	for i, r := range text {
		if i > start && unicode.IsSpace(r) {
			prev, _ := utf8.DecodeLastRuneInString(text[:i])
			if !unicode.IsSpace(prev) {
				out = append(out, text[start:i])
				start = i
			}
		}
	}
	return append(out, text[start:])
}

// BenchmarkFilter1000Words streams thousandWordsText a word at a time
// through the filter. It reports the CPU per 1,000 words, and the share
// of words the client had before their sentence was over (a filter
// holding each sentence to its end lets out none).
func BenchmarkFilter1000Words(b *testing.B) {
	toks := wordTokens(thousandWordsText)
	// sentenceEnd[i] is the byte offset where the sentence holding byte i ends.
	sentenceEnd := make([]int, len(thousandWordsText)+1)
	off := 0
	for _, s := range Sentences(thousandWordsText) {
		for i := off; i < off+len(s); i++ {
			sentenceEnd[i] = off + len(s)
		}
		off += len(s)
	}
	tokEnd := make([]int, len(toks))
	for i, n := 0, 0; i < len(toks); i++ {
		n += len(toks[i])
		tokEnd[i] = n
	}
	early := 0
	for b.Loop() {
		f := NewFilter(Options{DisplayName: "Alice Secretname"})
		released, written, next := 0, 0, 0
		early = 0
		for _, tok := range toks {
			written += len(tok)
			released += len(f.Write(tok))
			// Count the words let out by now whose sentence has not ended.
			for ; next < len(toks) && tokEnd[next] <= released; next++ {
				if written < sentenceEnd[tokEnd[next]-1] {
					early++
				}
			}
		}
		f.Close()
		if f.Verdict().Outcome != Pass {
			b.Fatal("the benchmark text was stopped")
		}
	}
	words := len(toks)
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/1000words")
	b.ReportMetric(100*float64(early)/float64(words), "%words-before-sentence-end")
}
