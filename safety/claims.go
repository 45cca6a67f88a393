package safety

import (
	_ "embed"
	"encoding/binary"
	"errors"
	"math"
	"regexp"
	"slices"
	"strings"
)

// The medical-claim detector (DESIGN §12, docs/safety.md): a linear model
// over hashed word and character n-grams, the risk lexicon's classes and
// the rules' matches, trained on the labelled corpus (testdata/corpus.tsv)
// by TestTrainClaimModel and embedded here. Rules decide what rules are
// right for (personal data, the app's own disclaimers); the model decides
// claims, diagnoses, doses and "stop your medication", which no list of
// phrasings covers.

// RuleClaimModel is the rule id of a claim the model found where no
// English rule matched too.
const RuleClaimModel = "medical.model"

// FallbackES is Fallback in Spanish, for callers that know the user reads
// Spanish. Both are allowlisted: neither is ever judged a claim.
const FallbackES = "Puedo darte sugerencias generales de bienestar, pero consulta a un profesional de la salud para recibir consejo médico."

// FallbackFor is the fallback in a user's language (a tag such as
// "es-MX"); English when the filter does not read it.
func FallbackFor(language string) string {
	if baseLanguage(language) == Spanish {
		return FallbackES
	}
	return Fallback
}

// claimDims is the size of the hashed feature space: large enough that
// the corpus's n-grams rarely share a slot.
const claimDims = 1 << 18

//go:embed model/claims.bin
var claimModelFile []byte

// claimModel is the embedded model. A model that does not load is a
// build defect, so the package refuses to start without it.
var claimModel = func() *linearModel {
	m, err := readModel(claimModelFile)
	if err != nil {
		panic("safety: the embedded claim model: " + err.Error())
	}
	return m
}()

// linearModel scores a sentence: bias plus the weights of its features,
// each feature counted once and the sum scaled by one over the root of
// their number, so long and short sentences score alike. A sentence
// scoring at or above threshold is a claim.
type linearModel struct {
	bias, threshold float32
	w               []float32
}

func (m *linearModel) score(features []uint32) float32 {
	if len(features) == 0 {
		return m.bias
	}
	var s float32
	for _, f := range features {
		s += m.w[f]
	}
	return m.bias + s/float32(math.Sqrt(float64(len(features))))
}

// The model file: "VXCM1", the dimensions, bias and threshold, then the
// non-zero weights as (index, weight) pairs in index order, little-endian.
const modelMagic = "VXCM1"

func readModel(b []byte) (*linearModel, error) {
	if len(b) < len(modelMagic)+16 || string(b[:len(modelMagic)]) != modelMagic {
		return nil, errors.New("not a claim model")
	}
	b = b[len(modelMagic):]
	dims, n := binary.LittleEndian.Uint32(b), binary.LittleEndian.Uint32(b[12:])
	if dims != claimDims || uint64(len(b)) != 16+8*uint64(n) {
		return nil, errors.New("a claim model of another shape")
	}
	m := &linearModel{bias: math.Float32frombits(binary.LittleEndian.Uint32(b[4:])),
		threshold: math.Float32frombits(binary.LittleEndian.Uint32(b[8:])), w: make([]float32, dims)}
	for p := b[16:]; len(p) > 0; p = p[8:] {
		i := binary.LittleEndian.Uint32(p)
		if i >= dims {
			return nil, errors.New("a weight outside the model")
		}
		m.w[i] = math.Float32frombits(binary.LittleEndian.Uint32(p[4:]))
	}
	return m, nil
}

func (m *linearModel) marshal() []byte {
	b := []byte(modelMagic)
	b = binary.LittleEndian.AppendUint32(b, claimDims)
	b = binary.LittleEndian.AppendUint32(b, math.Float32bits(m.bias))
	b = binary.LittleEndian.AppendUint32(b, math.Float32bits(m.threshold))
	var n uint32
	for _, w := range m.w {
		if w != 0 {
			n++
		}
	}
	b = binary.LittleEndian.AppendUint32(b, n)
	for i, w := range m.w {
		if w != 0 {
			b = binary.LittleEndian.AppendUint32(b, uint32(i))
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(w))
		}
	}
	return b
}

// deferral is a sentence handing the question to a clinician ("talk to
// your doctor about…", "consulta con tu médico…"), on folded text: a
// feature, not a pass, since "talk to your doctor, then stop your
// insulin" still tells the user to stop.
var deferral = regexp.MustCompile(`\b(consult|see|ask|talk to|talk with|speak to|speak with|check with|call|visit|tell|let|` +
	`mention\w*|bring\w*|flag|discuss|plan it with|get|seek|reach out|` +
	`consulta\w*|consulte\w*|pregunta\w*|pregunte|habla\w*|hable|llama|acude|comenta\w*|dile|digale|cuentale|cuentele|` +
	`avisa|avise|lleva|pide|planealo|busca)\b[^.!?;]{0,40}` +
	`\b(doctor\w*|gp|physician|pharmacist|dietitian|dietician|nutritionist|nurse|specialist|pediatrician|midwife|care team|` +
	`team|prescriber|\w+ologists?|obstetrician|therapist|consultant|educator|poison control|medical (?:help|attention|care)|` +
	`emergency services|` +
	`medic[oa]s?|pediatra|farmaceutic[oa]|nutriolog[oa]|dietista|especialista|ginecolog[oa]|endocrinolog[oa]|partera|urgencias|` +
	`equipo|\w+olog[oa]s?|obstetra|matrona|terapeuta|educador[a]?|centro de salud|farmacia|toxicologia|atencion medica|` +
	`ayuda medica|emergencias)\b`)

// debunked is a sentence that reports a claim in order to deny it ("the
// idea that cinnamon cures diabetes is a myth", "en internet leerás que…,
// pero no hay evidencia"): a claim's words under a reporting frame, and a
// verdict against it, on folded text.
var debunked = regexp.MustCompile(`\b(idea that|claims? that|you may read|you'll read|read online|people say|some say|some people say|` +
	`it's often said|myth that|eso de que|afirmaciones de que|leeras que|dicen que|se dice que|hay quien dice|mito de que)\b` +
	`.*\b(myth|false|isn't true|not true|no evidence|not backed|isn't backed|aren't backed|isn't supported|not supported|` +
	`isn't proven|unproven|no good proof|isn't good proof|isn't good evidence|mito|falso|no es cierto|no es verdad|` +
	`no tiene\w* (buena |solida )?evidencia|no hay (buena )?evidencia|no hay buenas pruebas|sin evidencia|no esta demostrado)\b`)

// allowlisted cuts the app's own fallbacks out of a piece (normal form):
// they defer to a professional and must never trip the detector.
var allowlisted = strings.NewReplacer(strings.ToLower(Fallback), " ", strings.ToLower(FallbackES), " ")

// claimHits judges a piece (normal form) for a medical claim: nil when
// it holds no risk word (the stream may have let such a piece out
// unjudged) or the model scores it below its threshold; else the ids of
// the rules that matched it, or RuleClaimModel.
func claimHits(norm, lang string) []string {
	c := scoreClaim(norm, lang)
	if !c.gated || c.score < claimModel.threshold {
		return nil
	}
	return c.ids()
}

// claimScore is the model's reading of a piece.
type claimScore struct {
	gated             bool // it holds a risk word, so the model judged it
	score             float32
	english, skeleton []string // the rules that matched
}

func scoreClaim(norm, lang string) claimScore {
	norm = allowlisted.Replace(norm)
	if !medicalRisk(norm) {
		return claimScore{}
	}
	c := claimScore{gated: true, english: medicalHits(norm), skeleton: claimRuleHits(skeletonText(norm), nil)}
	c.score = claimModel.score(claimFeatures(norm, lang, append(slices.Clip(c.english), c.skeleton...)))
	return c
}

// ids are the ids a blocked piece reports: the most specific that
// matched, medical.go's English rules, else the skeleton's, else the
// model's own.
func (c claimScore) ids() []string {
	switch {
	case len(c.english) > 0:
		return c.english
	case len(c.skeleton) > 0:
		return c.skeleton
	}
	return []string{RuleClaimModel}
}

// claimFeatures are a piece's hashed features: its words and word pairs;
// the same with each risk word replaced by its lexicon class, in pairs
// and triples; the character 3- to 5-grams of each word; the classes
// present, alone and in pairs; the English rules that matched; a
// deferral; a list field's shape; the language. Each appears once.
func claimFeatures(norm, lang string, rules []string) []uint32 {
	return claimFeaturesExcept(norm, lang, rules, "")
}

// claimFeaturesExcept leaves out the feature kinds named in skip (one
// byte each), for the training's cross-validation to weigh each kind.
func claimFeaturesExcept(norm, lang string, rules []string, skip string) []uint32 {
	var toks, abs []string
	classes := 0
	wordsOf(norm, func(w string, _, _ int) {
		if w[0] >= '0' && w[0] <= '9' {
			w = "#"
		}
		c := lexClass(w)
		switch {
		case c != "":
		case foodWords[w]:
			c = lexFood
		case cueWords[w] != "":
			c = cueWords[w]
		}
		if c != "" {
			classes |= 1 << classIndex(c)
		}
		switch c {
		case lexCondition, lexDrug, lexFood:
			// Named things are read as their class alone: which disease
			// or which food tells nothing of whether a sentence claims.
			toks, abs = append(toks, c), append(abs, c)
		case "":
			toks, abs = append(toks, w), append(abs, w)
		default:
			toks, abs = append(toks, w), append(abs, c)
		}
	})
	fs := featureSet{seen: make(map[uint32]bool, 16*len(toks)+16), skip: skip}
	for i, t := range toks {
		fs.add("w", t, "", "")
		if i+1 < len(toks) {
			fs.add("b", t, toks[i+1], "")
			fs.add("a", abs[i], abs[i+1], "")
		}
		if i+2 < len(toks) {
			fs.add("t", abs[i], abs[i+1], abs[i+2])
		}
		if abs[i] != t || t == lexCondition || t == lexDrug || t == lexFood {
			fs.add("L", abs[i], "", "")
		}
	}
	// The sentence's skeleton: its classes in order, filler dropped, so
	// "FOOD CURE COND" is one feature however it is worded.
	var sk []string
	for i, a := range abs {
		if a != toks[i] || a == lexCondition || a == lexDrug || a == lexFood {
			sk = append(sk, a)
		}
	}
	for i := range sk {
		if i+1 < len(sk) {
			fs.add("k", sk[i], sk[i+1], "")
		}
		if i+2 < len(sk) {
			fs.add("K", sk[i], sk[i+1], sk[i+2])
		}
	}
	for i := range featureClasses {
		for j := i + 1; j < len(featureClasses); j++ {
			if classes&(1<<i) != 0 && classes&(1<<j) != 0 {
				fs.add("LL", featureClasses[i], featureClasses[j], "")
			}
		}
	}
	for _, r := range rules {
		fs.add("R", r, "", "")
	}
	folded := fold(norm)
	if deferral.MatchString(folded) {
		fs.add("D", "defer", "", "")
	}
	if debunked.MatchString(folded) {
		fs.add("D", "debunk", "", "")
	}
	if listField.MatchString(norm) {
		// A field's classes are features of their own, so what the model
		// learns of a class in a list ("medications: metformin") is not
		// learnt of it in prose.
		fs.add("F", "field", "", "")
		for i, c := range featureClasses {
			if classes&(1<<i) != 0 {
				fs.add("F", c, "", "")
			}
		}
	}
	fs.add("lang", lang, "", "")
	return fs.list
}

// listField is a piece written as a labelled field or list item ("goals:
// lower cholesterol", "- supplements: vitamin d", "1. instead of insulin:
// cinnamon"), on normal text: a feature, not a pass, since a claim can be
// written as a list as well as in prose, and the model learns from both
// labels of such pieces which of them claim (the corpus's fifth round).
var listField = regexp.MustCompile(`^[-*•\s]*(\d{1,3}[.)]\s*)?[^\s:.!?][^:.!?]{0,30}:\s`)

func classIndex(c string) int { return slices.Index(featureClasses, c) }

// featureSet collects hashed features once each. A feature is the
// FNV-1a hash of its kind and parts, separated by a byte no word holds.
type featureSet struct {
	seen map[uint32]bool
	list []uint32
	skip string
}

func (fs *featureSet) add(kind, a, b, c string) {
	if fs.skip != "" && strings.Contains(fs.skip, kind) {
		return
	}
	h := uint32(2166136261)
	for _, part := range [...]string{kind, a, b, c} {
		for i := 0; i < len(part); i++ {
			h = (h ^ uint32(part[i])) * 16777619
		}
		h = (h ^ 0x1f) * 16777619
	}
	fs.put(h)
}

func (fs *featureSet) put(h uint32) {
	h %= claimDims
	if !fs.seen[h] {
		fs.seen[h] = true
		fs.list = append(fs.list, h)
	}
}
