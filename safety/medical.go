package safety

import (
	"regexp"
	"strings"
)

// The medical-claim and prescriptive-tone rules (docs/safety.md lists
// them with examples). Each is a word-bounded pattern over a piece of the
// answer, lower-cased, with curly apostrophes made straight; a rule may
// name words that, just before its match, make it no claim ("if you have
// diabetes"). Disclaimers (allowlist) are cut out of the piece first, so
// the app's own fallback never trips a rule.

// conditions are diseases and conditions in the medical sense. Everyday
// words of wellness (stress, energy, mood, cravings) are not among them.
const conditions = `(diabetes|diabetic|prediabetes|cancers?|tumou?rs?|hypertension|high blood pressure|` +
	`heart disease|heart failure|arthritis|asthma|depression|anxiety disorders?|panic disorders?|insomnia|` +
	`ibs|irritable bowel( syndrome)?|crohn'?s( disease)?|colitis|celiac disease|coeliac disease|` +
	`hypothyroidism|hyperthyroidism|thyroid (disease|disorders?|problems)|infections?|flu|influenza|covid(-19)?|` +
	`colds?|common cold|migraines?|eczema|psoriasis|acne|adhd|autism|alzheimer'?s|dementia|parkinson'?s|ulcers?|` +
	`kidney disease|liver disease|fatty liver|osteoporosis|gout|ana?emia|high cholesterol|obesity|pcos|` +
	`endometriosis|acid reflux|gerd|sleep apno?ea|fibromyalgia|lupus|multiple sclerosis|strokes?|heart attacks?|` +
	`epilepsy|hiv|hepatitis|pneumonia|bronchitis|sinusitis|utis?|urinary tract infections?|` +
	`diseases?|illness(es)?|disorders?|ailments?|syndromes?|inflammation|chronic pain|back pain|joint pain|` +
	`headaches?|medical conditions?|conditions?|symptoms?)`

// namedConditions are conditions a sentence can say the user has: the
// generic words (symptoms, conditions) are left out.
const namedConditions = `(diabetes|prediabetes|cancer|a tumou?r|hypertension|high blood pressure|heart disease|` +
	`arthritis|asthma|depression|an anxiety disorder|insomnia|ibs|irritable bowel syndrome|crohn'?s|colitis|` +
	`celiac disease|coeliac disease|hypothyroidism|hyperthyroidism|a thyroid (disease|disorder|problem)|` +
	`an infection|the flu|influenza|covid(-19)?|a cold|a migraine|migraines|eczema|psoriasis|adhd|dementia|` +
	`an ulcer|kidney disease|liver disease|fatty liver|osteoporosis|gout|ana?emia|high cholesterol|pcos|` +
	`endometriosis|acid reflux|gerd|sleep apno?ea|fibromyalgia|lupus|pneumonia|bronchitis|sinusitis|a uti|` +
	`an eating disorder|a (\w+ )?disorder|a (\w+ )?disease|(type [12] )diabetes)`

const drugs = `(dose|doses|dosage|medications?|meds|medicines?|insulin|metformin|ibuprofen|aspirin|paracetamol|` +
	`acetaminophen|antibiotics?|antidepressants?|statins?|blood thinners?|steroids?|warfarin|levothyroxine|` +
	`prednisone|opioids?|painkillers?|sleeping pills?|prescriptions?|inhalers?)`

const det = `(your |the |a |an |my |their |his |her |this |that )?`

type rule struct {
	id string
	// triggers: the pattern runs only on a piece holding one of these
	// words. They are a cheap first look, never the decision: every match
	// holds one of them.
	triggers []string
	re       *regexp.Regexp
	// unlessBefore, matched against the text just before the match, makes
	// the match no claim.
	unlessBefore *regexp.Regexp
}

func mustRule(id string, triggers []string, pattern, unlessBefore string) rule {
	r := rule{id: id, triggers: triggers, re: regexp.MustCompile(pattern)}
	if unlessBefore != "" {
		r.unlessBefore = regexp.MustCompile(`(?:` + unlessBefore + `)$`)
	}
	return r
}

// Rule ids, as the verdict and the audit row name them.
const (
	RuleCure         = "medical.cure"
	RuleTreat        = "medical.treat"
	RuleDiseaseClaim = "medical.disease_claim"
	RuleDiagnose     = "medical.diagnose"
	RulePrescribe    = "medical.prescribe"
	RuleDosage       = "medical.dosage"
	RuleMust         = "prescriptive.must"
	RuleShould       = "prescriptive.should"
	RuleNeedTo       = "prescriptive.need_to"
)

// negated: "don't stop taking your insulin", "never double your dose".
const negated = `\b(don't|do not|never|shouldn't|should not|must not|mustn't|not to|without)( \w+)?\s*`

// conditional: "if you have diabetes" asks, it does not diagnose.
const conditional = `\b(if|when|whether|unless|since|because|once|in case|who|that|anyone who|people who|those who|before)\s*`

var medicalRules = []rule{
	mustRule(RuleCure, words("cur"), `\bcur(e|es|ed|ing)\s+`+det+`(\w+ ){0,2}`+conditions+`\b`+
		`|\bcures?\s+for\s+`+det+`(\w+ ){0,2}`+conditions+`\b`+
		`|\bcures?\s+(everything|anything|all (\w+ )?(ills|diseases))\b`, negated+`|\bno\s*$|\bnot an?\s*$|\bnot\s*$`),
	mustRule(RuleTreat, words("treat", "therap", "remed", "medic", "antidote"), `\btreat(s|ed|ing)?\s+`+det+`(\w+ ){0,2}`+conditions+`\b`+
		`|\b(treatments?|therapy|remedy|remedies|medicine|medication|antidote)\s+(for|of|against)\s+`+det+`(\w+ ){0,2}`+conditions+`\b`, negated),
	mustRule(RuleDiseaseClaim, words("prevent", "revers", "heal", "fight", "kill", "eliminat", "eradicat", "rid of", "protect", "ward", "risk of", "reliev", "alleviat", "sooth", "stop", "beat", "help"), `\b(prevents?|preventing|reverses?|reversing|heals?|healing|fights?|fighting|kills?|`+
		`eliminates?|eradicates?|gets? rid of|protects? (you )?(against|from)|wards? off|lowers? (your |the )?risk of|`+
		`reduces? (your |the )?risk of|relieves?|relieving|alleviates?|soothes?|stops?|beats?)\s+`+det+`(\w+ ){0,2}`+conditions+`\b`+
		`|\b(help|helps|helping|can help|will help)\s+(you\s+)?(with|manage|control|treat|heal|ease|relieve|reverse|beat|cure|fight|prevent)\s+`+det+`(\w+ ){0,2}`+conditions+`\b`, negated),
	mustRule(RuleDiagnose, words("diagnos", "like", "sign", "symptom", "indication", "case"), `\b(i|we)\s*('d|'ll|would|will|can|could|am going to|'m going to)?\s+diagnos(e|ing)\b`+
		`|\bmy\s+diagnosis\b`+
		`|\b(sounds|looks|seems)\s+like\s+(you have |a case of |the start of )?`+namedConditions+`\b`+
		`|\b(is|are|could be|might be|may be|'s|be)\s+(a |an |the |early |classic |typical )?(sign|signs|symptom|symptoms|indication|case)\s+of\s+(\w+ ){0,2}`+conditions+`\b`, ""),
	// "You have diabetes" diagnoses; "if you have diabetes" asks.
	mustRule(RuleDiagnose, words("you"), `\byou\s+(probably |likely |may |might |must |could |clearly |definitely |already |seem to |appear to )?`+
		`(have|has|are suffering from|suffer from|are showing (signs|symptoms) of|are developing|have got)\s+(early |mild |severe |chronic |some )?`+namedConditions+`\b`,
		conditional),
	mustRule(RulePrescribe, words("prescri", "recommend"), `\b(i|we)\s*('d|'ll|would|will|can|could)?\s+(prescribe|recommend (taking|a prescription|a dose))\b`+
		`|\bprescrib(e|ing)\s+(you|yourself)\b`, ""),
	mustRule(RuleDosage, words("mg", "mcg", "µg", "iu", "gram", "unit", "tablet", "pill", "capsule", "drops", "puff", "dose", "dosage", "medic", "meds", "insulin", "metformin", "ibuprofen", "aspirin", "paracetamol", "acetaminophen", "antibiotic", "antidepressant", "statin", "thinner", "steroid", "warfarin", "levothyroxine", "prednisone", "opioid", "painkiller", "prescription", "inhaler"), `\b(take|taking|takes|dose of|dosage of|doses of)\s+(\w+ ){0,3}?\d+([.,]\d+)?\s*(mg|mcg|µg|iu|milligrams?|micrograms?|units|tablets?|pills?|capsules?|drops|puffs)\b`+
		`|\b(take|taking)\s+(one|two|three|four|a couple of|an extra|extra|another)\s+(tablets?|pills?|capsules?|doses?|puffs?)\b`+
		`|\b(take|taking|double|doubling|halve|increase|increasing|decrease|decreasing|lower|raise|adjust|skip|skipping|`+
		`stop|stopping|start|starting|change|changing|cut|reduce|come off|switch)\s+(your |the |a |an |some |more |less |extra |any |a higher |a lower )?`+drugs+`\b`,
		negated),
}

var prescriptiveRules = map[string][]rule{
	English: {
		mustRule(RuleMust, words("you"), `\byou\s+must(n't)?\b`, ""),
		mustRule(RuleShould, words("you"), `\byou\s+should(n't)?\b`, ""),
		mustRule(RuleNeedTo, words("you"), `\byou\s+(need|needn't)\s+to\b`, ""),
	},
	// Spanish says "you" in the verb: "debes", "usted debe", "tienes que".
	Spanish: {
		mustRule(RuleMust, words("debe", "tienes que", "tiene que"), `\b(debes|usted debe|ustedes deben|tienes que|usted tiene que)\b`, ""),
		mustRule(RuleShould, words("deber"), `\b(deberías|debería usted|deberían ustedes)\b`, ""),
		mustRule(RuleNeedTo, words("necesit"), `\b(necesitas|usted necesita)\s+\w+(ar|er|ir)\b`, ""),
	},
}

// disclaimers are cut out of a piece before the medical rules run: the
// deferrals to a professional (to the end of the sentence: "talk to your
// doctor before you change your dose"), "this isn't medical advice", and
// the app's own fallback.
var disclaimers = regexp.MustCompile(
	`\b(consult|see|ask|talk to|talk with|speak to|speak with|check with|contact|call|visit)\s+(a|your|the|an)\s+` +
		`(qualified |registered |licensed |local |trusted )?(doctor|gp|physician|pharmacist|dietitian|dietician|nutritionist|nurse|` +
		`specialist|healthcare provider|health care provider|healthcare professional|health professional|medical professional|` +
		`care team|clinician|endocrinologist|cardiologist|therapist)[^.!?]*` +
		`|\b(this|that|it)\s+(is not|isn't|is no|'s not)\s+(a substitute for )?(medical|professional) advice\b` +
		`|\bnot (a substitute for |intended as |meant as )?(medical|professional) advice\b` +
		`|\b(i'm|i am)\s+not\s+a\s+(doctor|medical professional|clinician)[^.!?]*` +
		`|\b(i|we)\s+(can't|cannot|can not|am not able to|'m not able to|won't|don't|am unable to|'m unable to)\s+(diagnose|prescribe|treat|give medical)[^.!?]*` +
		`|\b(seek|get)\s+(urgent |immediate |prompt )?(medical (advice|attention|help|care)|a diagnosis|professional (advice|help))[^.!?]*` +
		`|` + regexp.QuoteMeta(strings.ToLower(Fallback)))

// Fallback is what a blocked answer ends with (DESIGN §12).
const Fallback = "I can provide general wellness suggestions, but please consult a healthcare provider for medical advice."

// normal is a piece as the rules read it: lower case, straight
// apostrophes, runs of spaces as one.
func normal(s string) string {
	s = strings.ToLower(s)
	s = strings.NewReplacer("’", "'", "‘", "'", "\u00a0", " ").Replace(s)
	return strings.Join(strings.Fields(s), " ")
}

// hits appends the ids of rules matching text (normal form).
func hits(rules []rule, text string, ids []string) []string {
	for _, r := range rules {
		if !r.triggered(text) {
			continue
		}
		for _, m := range r.re.FindAllStringIndex(text, -1) {
			if r.unlessBefore != nil && r.unlessBefore.MatchString(text[:m[0]]) {
				continue
			}
			ids = append(ids, r.id)
			break
		}
	}
	return ids
}

func words(w ...string) []string { return w }

func (r rule) triggered(text string) bool {
	for _, w := range r.triggers {
		if strings.Contains(text, w) {
			return true
		}
	}
	return false
}

// medicalHits are the medical rules matching a piece: features of the
// claim model (claims.go), which decides, and the ids a blocked piece
// reports. Disclaimers are cut out only when some rule may match: most
// pieces trigger none.
func medicalHits(text string) []string {
	for _, r := range medicalRules {
		if r.triggered(text) {
			return hits(medicalRules, disclaimers.ReplaceAllString(text, " "), nil)
		}
	}
	return nil
}

// prescriptiveHits are the prescriptive-tone rules of a piece's language
// matching it.
func prescriptiveHits(text, lang string) []string { return hits(prescriptiveRules[lang], text, nil) }
