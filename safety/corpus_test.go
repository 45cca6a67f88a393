package safety

import (
	"bufio"
	"os"
	"strings"
	"testing"
)

// corpusRow is one sentence of testdata/corpus.tsv (go run
// ./safety/cmd/corpus; docs/safety.md, "The corpus").
type corpusRow struct {
	split, lang, label, cat, family, text string
}

func readCorpus(t testing.TB) []corpusRow {
	t.Helper()
	f, err := os.Open("testdata/corpus.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []corpusRow
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		p := strings.Split(line, "\t")
		if len(p) != 6 {
			t.Fatalf("corpus.tsv: %q has %d columns, want 6", line, len(p))
		}
		rows = append(rows, corpusRow{p[0], p[1], p[2], p[3], p[4], p[5]})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return rows
}
