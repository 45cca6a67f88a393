package safety

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
)

// train regenerates the embedded claim model from the corpus:
//
//	go test ./safety -run TestTrainClaimModel -train
//
// The result is a function of the corpus and the constants below alone
// (fixed seed, fixed order, no concurrency), so the same corpus gives the
// same model file, byte for byte.
var train = flag.Bool("train", false, "retrain the claim model (model/claims.bin) from testdata/corpus.tsv")

// Training choices, fixed on the dev part (docs/safety.md): logistic
// regression by AdaGrad over the train part and eval.tsv, a benign
// sentence weighing more than a claim (a wrong block costs the user the
// answer), a light L2 penalty.
const (
	trainSeed    = 20261128
	trainEpochs  = 30
	trainRate    = 0.2
	trainL2      = 1e-4
	benignWeight = 2.0
	// devFalseBlockBudget is the false-block rate the threshold may cost
	// on the dev part, per language: half the target's 0.5 %, a margin
	// for sentences the dev part does not hold.
	devFalseBlockBudget = 0.25
)

type example struct {
	lang     string
	claim    bool
	features []uint32
}

// exampleOf is a labelled sentence as the detector reads it (claimHits),
// and false when the lexicon gate lets it out unjudged.
func exampleOf(text, lang string, claim bool) (example, bool) {
	norm := allowlisted.Replace(normal(text))
	if !medicalRisk(norm) {
		return example{}, false
	}
	return example{lang: lang, claim: claim, features: claimFeatures(norm, lang, ruleEvidence(norm))}, true
}

func TestTrainClaimModel(t *testing.T) {
	if !*train {
		t.Skip("run with -train to regenerate model/claims.bin")
	}
	rows := readCorpus(t)
	var trainSet, dev []example
	for _, r := range rows {
		e, ok := exampleOf(r.text, r.lang, r.label == "claim")
		switch {
		case !ok:
		case r.split == "train":
			trainSet = append(trainSet, e)
		case r.split == "dev":
			dev = append(dev, e)
		}
	}
	// eval.tsv, the rules' own set, is English training data: its
	// medical rows are claims, the rest (benign, numbers, tone, PII) not.
	for _, r := range readEval(t) {
		if e, ok := exampleOf(r.text, English, strings.HasPrefix(r.label, "medical.")); ok {
			trainSet = append(trainSet, e)
		}
	}
	m := fit(trainSet)
	m.threshold = pickThreshold(t, m, dev)
	if err := os.WriteFile("model/claims.bin", m.marshal(), 0o644); err != nil {
		t.Fatal(err)
	}
	nnz := 0
	for _, w := range m.w {
		if w != 0 {
			nnz++
		}
	}
	t.Logf("trained on %d sentences, %d non-zero weights, threshold %.4f", len(trainSet), nnz, m.threshold)
}

// fit trains a weighted logistic regression by AdaGrad, in a fixed
// shuffled order per epoch. The L2 penalty is applied to the weights an
// example touches, scaled by the epochs' count of steps, which keeps the
// pass linear in the features.
func fit(set []example) *linearModel {
	w := make([]float64, claimDims)
	g2 := make([]float64, claimDims)
	var bias, bias2 float64
	r := rand.New(rand.NewPCG(trainSeed, 1))
	order := make([]int, len(set))
	for i := range order {
		order[i] = i
	}
	avg := make([]float64, claimDims)
	var avgBias float64
	averaged := 0
	for epoch := range trainEpochs {
		r.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for _, k := range order {
			e := set[k]
			scale := 1 / math.Sqrt(float64(len(e.features)))
			z := bias
			for _, f := range e.features {
				z += w[f] * scale
			}
			y, cw := 0.0, benignWeight
			if e.claim {
				y, cw = 1, 1
			}
			d := (1/(1+math.Exp(-z)) - y) * cw
			for _, f := range e.features {
				g := d*scale + trainL2*w[f]
				g2[f] += g * g
				w[f] -= trainRate * g / (math.Sqrt(g2[f]) + 1e-8)
			}
			bias2 += d * d
			bias -= trainRate * d / (math.Sqrt(bias2) + 1e-8)
		}
		if epoch >= trainEpochs/2 {
			for i, x := range w {
				avg[i] += x
			}
			avgBias += bias
			averaged++
		}
	}
	m := &linearModel{bias: float32(avgBias / float64(averaged)), w: make([]float32, claimDims)}
	for i, x := range avg {
		m.w[i] = float32(x / float64(averaged))
	}
	return m
}

// pickThreshold chooses, on the dev part, the threshold that blocks the
// most claims in the weaker language while wrongly blocking at most
// devFalseBlockBudget of each language's benign sentences; among equal
// thresholds, the middle of their span, to leave room on both sides.
func pickThreshold(t *testing.T, m *linearModel, dev []example) float32 {
	type scored struct {
		s     float32
		lang  string
		claim bool
	}
	var all []scored
	pos, neg := map[string]int{}, map[string]int{}
	for _, e := range dev {
		all = append(all, scored{m.score(e.features), e.lang, e.claim})
		if e.claim {
			pos[e.lang]++
		} else {
			neg[e.lang]++
		}
	}
	// The dev part's benign sentences the gate let out count too: the
	// budget is a share of every benign sentence of the part.
	for _, r := range readCorpus(t) {
		if r.split == "dev" && r.label != "claim" && !medicalRisk(allowlisted.Replace(normal(r.text))) {
			neg[r.lang]++
		}
	}
	slices.SortFunc(all, func(a, b scored) int { return cmpFloat(b.s, a.s) })
	// Walk thresholds from high to low: each step admits one more score.
	tp, fp := map[string]int{}, map[string]int{}
	best, bestLo, bestHi := -1.0, float32(0), float32(0)
	for i, x := range all {
		if x.claim {
			tp[x.lang]++
		} else {
			fp[x.lang]++
		}
		if i+1 < len(all) && all[i+1].s == x.s {
			continue
		}
		ok := true
		recall := 100.0
		for _, l := range []string{English, Spanish} {
			if pct(fp[l], neg[l]) > devFalseBlockBudget {
				ok = false
			}
			recall = math.Min(recall, pct(tp[l], pos[l]))
		}
		if !ok {
			break
		}
		lo := float32(math.Inf(-1))
		if i+1 < len(all) {
			lo = all[i+1].s
		}
		if recall > best {
			best, bestLo, bestHi = recall, lo, x.s
		} else if recall == best {
			bestLo = lo
		}
	}
	th := bestHi
	if !math.IsInf(float64(bestLo), -1) {
		th = (bestLo + bestHi) / 2
	}
	var b strings.Builder
	for _, l := range []string{English, Spanish} {
		tpn, fpn := 0, 0
		for _, x := range all {
			if x.lang == l && x.s >= th {
				if x.claim {
					tpn++
				} else {
					fpn++
				}
			}
		}
		fmt.Fprintf(&b, "dev %s: claims blocked %d/%d (%.1f %%), benign blocked %d/%d (%.2f %%); ", l, tpn, pos[l], pct(tpn, pos[l]), fpn, neg[l], pct(fpn, neg[l]))
	}
	t.Log(b.String())
	return th
}

func cmpFloat(a, b float32) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
