package safety

import (
	"bufio"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
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

// wordGap is issue 37's upstream: one word every 20 ms.
const wordGap = 20 * time.Millisecond

// riskFreeAnswers are answers the filter lets out word by word: the
// corpus's benign sentences whose words all go out once each has its
// trailing space (so none holds a risk word), every tenth of them, in the
// corpus's order. Chosen by the filter's exported behaviour, so an earlier
// commit's filter picks the same sentences when it has the same corpus.
func riskFreeAnswers(b *testing.B) []string {
	file, err := os.Open("testdata/corpus.tsv")
	if err != nil {
		b.Fatal(err)
	}
	defer file.Close()
	var out []string
	n := 0
	sc := bufio.NewScanner(file)
	for sc.Scan() {
		p := strings.Split(sc.Text(), "\t")
		if len(p) != 6 || p[2] != "benign" {
			continue
		}
		words := strings.Fields(p[5])
		f := NewFilter(Options{})
		released := ""
		for _, w := range words[:len(words)-1] {
			released += f.Write(w + " ")
		}
		if released != strings.Join(words[:len(words)-1], " ")+" " {
			continue // a word held: a risk word, a digit
		}
		if n++; n%10 == 0 {
			out = append(out, p[5])
		}
	}
	if len(out) < 50 {
		b.Fatalf("%d risk-free answers in the corpus, want ≥ 50", len(out))
	}
	return out
}

// firstContent streams an answer as a model does (each word with the
// space before it, one every wordGap) through the filter, or straight
// through when filter is false, and returns how long after the first word
// left the upstream its first content (anything but whitespace) reached
// the reader.
func firstContent(text string, filter bool) time.Duration {
	toks := wordTokens(text)
	ch := make(chan string)
	stop := make(chan struct{})
	start := time.Now()
	go func() {
		defer close(ch)
		for i, tok := range toks {
			if i > 0 {
				select {
				case <-time.After(wordGap):
				case <-stop:
					return
				}
			}
			select {
			case ch <- tok:
			case <-stop:
				return
			}
		}
	}()
	defer close(stop)
	f := NewFilter(Options{DisplayName: "Alice Secretname"})
	for tok := range ch {
		out := tok
		if filter {
			out = f.Write(tok)
		}
		if strings.TrimSpace(out) != "" {
			return time.Since(start)
		}
	}
	f.Close()
	return time.Since(start) // nothing out before the end: the whole answer waited
}

// BenchmarkFirstContentWordByWord is issue 37's first-content target in
// the filter alone: answers with no risk word, streamed a word every
// 20 ms with each word's space before it, as a model's tokens come, the
// filter on and off alternated answer by answer in the same run. It
// reports the p50 of first content with the filter off and on, what the
// filter adds (target ≤ 2 ms), and the share of answers whose first
// content waited for a second word. A filter that lets a word out only
// once the whitespace after it has arrived adds one gap, 20 ms, to every
// answer: the benchmark shows that miss (bench/first.sh runs it against an
// earlier commit's filter).
func BenchmarkFirstContentWordByWord(b *testing.B) {
	answers := riskFreeAnswers(b)
	var off, on []time.Duration
	waited := 0
	for b.Loop() {
		off, on, waited = off[:0], on[:0], 0
		for _, a := range answers {
			off = append(off, firstContent(a, false))
			d := firstContent(a, true)
			on = append(on, d)
			if d >= wordGap/2 {
				waited++
			}
		}
	}
	p50 := func(ds []time.Duration) float64 {
		s := slices.Clone(ds)
		slices.Sort(s)
		return float64(s[len(s)/2]) / float64(time.Millisecond)
	}
	p90 := func(ds []time.Duration) float64 {
		s := slices.Clone(ds)
		slices.Sort(s)
		return float64(s[len(s)*9/10]) / float64(time.Millisecond)
	}
	added := p50(on) - p50(off)
	b.ReportMetric(p90(on)-p90(off), "ms-added-p90")
	b.ReportMetric(p50(off), "ms-first-off-p50")
	b.ReportMetric(p50(on), "ms-first-on-p50")
	b.ReportMetric(added, "ms-added-p50")
	b.ReportMetric(100*float64(waited)/float64(len(answers)), "%answers-waited")
	verdict := "met"
	if added > 2 {
		verdict = "missed"
	}
	b.Logf("%d answers: first content added by the filter, p50 %.2f ms (target ≤ 2 ms: %s); %d waited a word", len(answers), added, verdict, waited)
}
