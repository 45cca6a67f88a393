package safety

import (
	"regexp"
	"slices"
	"strings"
)

// Claim rules over a sentence's skeleton, in both languages: the shapes a
// claim takes (a verb of curing before a condition, stopping before a
// medicine, "suena a" before a disease), written from how English and
// Spanish say them, with the risk lexicon standing in for the open lists
// of diseases and medicines. They decide nothing alone: each is a feature
// of the claim model, which weighs them against what else the sentence
// says (a negation, a hedge, a deferral), and a blocked sentence reports
// the ids of those that matched (docs/safety.md).

// Rule ids the rules add to medical.go's.
const (
	RuleReplace        = "medical.replace"
	RuleStopMedication = "medical.stop_medication"
	RuleUnsafeSafety   = "medical.pregnancy_child"
)

// skeletonText is a piece as the claim rules read it: its folded words
// separated by single spaces, numbers as "#", and each word of a named
// class (a condition, symptom, medicine, dose, food, child, pregnancy,
// clinician, organ) as its class name in capitals.
func skeletonText(norm string) string {
	var b strings.Builder
	wordsOf(norm, func(w string, _, _ int) {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		c := lexClass(w)
		switch {
		case w[0] >= '0' && w[0] <= '9':
			b.WriteByte('#')
		case c != "" && c != lexCure:
			b.WriteString(c)
		case c == "" && foodWords[w]:
			b.WriteString(lexFood)
		default:
			b.WriteString(w)
		}
	})
	return b.String()
}

type claimRule struct {
	id string
	// needs are the class names of which a skeleton must hold one for
	// the rule to match: a cheap look before the expression runs.
	needs []string
	re    *regexp.Regexp
	// unless, matched against the skeleton just before the match, makes
	// it no claim: "don't stop your insulin", "si tienes diabetes".
	unless *regexp.Regexp
}

func mustClaimRule(id string, needs []string, pattern, unless string) claimRule {
	r := claimRule{id: id, needs: needs, re: regexp.MustCompile(pattern)}
	if unless != "" {
		r.unless = regexp.MustCompile(`(?:` + unless + `)\s*$`)
	}
	return r
}

// gap is up to n filler words between the parts of a rule.
func gap(n int) string { return `(?: \S+){0,` + string(rune('0'+n)) + `}` }

const (
	negatedEN = `\b(?:don't|do not|never|not|without|shouldn't|no need to|before you)(?: \S+){0,2}`
	negatedES = `\b(?:no|nunca|ni|sin|antes de)(?: \S+){0,2}`
	asksES    = `\b(?:si|cuando|aunque|mientras|quienes|personas con|gente con)`
	asksEN    = `\b(?:if|when|whether|unless|who|people with|anyone with|those with)`
)

// The verbs and phrases of the rules, both languages in each list: a
// sentence in one language never holds the other's words, so one list
// serves both.
const (
	// effectVerbs act on a condition: "cures diabetes", "alivia la
	// migraña", "wipes out", "acaba con".
	effectVerbs = `cures?|cured|curing|heals?|healed|healing|treats?|treated|treating|relieves?|eases?|soothes?|calms?|` +
		`prevents?|reverses?|reversed|undoes|undo|eliminates?|eradicates?|kills?|fights?|beats?|beating|clears?|fixes|fix|` +
		`gets? rid of|wipes? out|knocks? out|melts? away|flushes?|dissolves?|shrinks?|blocks?|rebuilds?|regenerates?|` +
		`detoxes|controls?|manages?|lowers?|reduces?|stops?|protects? (?:you )?against|wards? off|keeps? away|` +
		`sort (?:it|them) out|takes? care of|handles?|solved|goodbye to|relief for|remedy for|treatment for|cure for|` +
		`cura|curan|curo|curaron|curar|curarse|curate|curas|sana|sanan|sanar|sano|sanaron|trata|tratan|tratar|alivia|alivian|` +
		`calma|calman|controla|controlan|regula|regulan|baja|bajan|desinflama|mejora|mejoran|combate|previene|previenen|` +
		`evita|evitan|revierte|revierten|elimina|eliminan|acaba con|acaban con|mata|matan|quita|quitan|quitar|protege contra|` +
		`frena|encoge|regenera|deshace|deshacer|resolvio|resuelve|adios a|librarte de|remedio para|tratamiento para|cura para|` +
		`cura de|alivio para|se le quita|le quita|te quita`
	// goneWords follow a condition that the sentence says will go.
	goneWords = `goes away|go away|disappears?|vanish(?:es)?|is gone|will be gone|is history|can't survive|clears? up|` +
		`is reversible|reversed|will improve|calms? down|never comes? back|is curable|just stops|` +
		`desaparece|desaparecen|se va|se quita|se quitan|se cura|se revierte|se calma|se calman|no vuelve|no regresa|` +
		`tiene cura|no tiene nada que hacer|se controla|mejora|se le frena|se le revirtio`
	// measured are the words that make a number with a unit an amount
	// a food holds or a reading the user logged, not a dose to take:
	// "an orange has about 70 mg of vitamin C", "you logged insulin, 12
	// units", "tus lecturas fueron de 98 a 164 mg/dL".
	measured = `has|contains?|gives?|provides?|logged|entered|recorded|noted|marked|shows?|showed|intake|readings?|ranged|` +
		`averaged?|about|around|roughly|approximately|nearly|almost|over|under|` +
		`tiene|tienen|contiene|contienen|aporta|aportan|registraste|registro|registrado|registrada|anotaste|apuntaste|` +
		`pusiste|marcaste|fue|fueron|media|promedio|ingesta|lecturas?|unos|unas|mas de|menos de|alrededor de|ronda|rondan|cerca de`
	// unproven is a claim said not to hold: "hasn't been shown to
	// prevent cancer", "no herb has been proven to cure", "no está
	// demostrado que cure".
	unproven = `\b(?:no|not|hasn't|haven't|isn't|aren't|never|nor|nunca)\b(?: \S+){0,3} (?:been )?` +
		`(?:shown|proven|proof|evidence|demostrado|probado|pruebas|evidencia)` + `(?: \S+){0,4}`
	named    = `(?:COND|SYM|BODY)`
	medicine = `(?:DRUG|FOOD)`
)

var claimRules = []claimRule{
	mustClaimRule(RuleDiseaseClaim, []string{"COND", "SYM", "BODY"}, `\b(?:`+effectVerbs+`)\b`+gap(4)+` `+named+`\b|\b`+named+gap(4)+` (?:`+goneWords+`)\b`,
		negatedEN+`|`+negatedES+`|\b(?:ningun|ninguna|nada|idea that|claims that|read online that|afirmaciones de que|eso de que|`+
			`leeras que|dice que|dicen que|say|says)`+gap(4)+`|`+unproven),
	mustClaimRule(RuleDosage, []string{"DRUG", "DOSE", "#"}, `# (?:\S+ )?(?:DOSE|grams?|gramos?|tablespoons?|teaspoons?|cucharadas?|cucharaditas?|cloves|capsules)\b`+
		`|\b(?:DOSE (?:of|de)|extra|half the|double|doble|la mitad de|media|increase|bump|go up|up your|sube|subele|aumenta|duplica)`+gap(2)+` DRUG\b`+
		`|\bDRUG(?: \S+){0,3} (?:DOSE|#)\b|\b(?:take|toma|tomate|tomese|dale|give|chew|mastica)\b`+gap(3)+` (?:DRUG|DOSE|#)\b`,
		negatedEN+`|`+negatedES+`|\b(?:only|solo|recommend|recomendarte|ask|pregunta)`+gap(3)+`|\b(?:`+measured+`)`+gap(3)),
	mustClaimRule(RuleStopMedication, []string{"DRUG"}, `\b(?:stop|stopping|quit|skip|ditch|drop|throw away|throw out|toss|come off|go off|off|wean|halve|`+
		`cut|pause|hold|cancel|lower|reduce|no more|finishing|refilling|optional|`+
		`deja|dejes|dejar|dejando|suspende|suspender|suspendas|suspenderlo|tira|saltate|salta|pausa|cancela|olvidate de|`+
		`quita|abandona|corta|se acabo|sin|surtir|bajale)\b`+gap(3)+` DRUG\b`+
		`|\b(?:no need for|don't need|won't need|no point in|no reason to|ya no|no necesitas|no hace falta|no necesitan|sale sobrando|`+
		`becomes unnecessary|isn't needed|sobra)`+gap(4)+` DRUG\b|\bDRUG(?: \S+){0,3} (?:becomes unnecessary|isn't needed|is optional|`+
		`sale sobrando|sobra|es opcional|te hace mas dano)\b`,
		`\b(?:don't|do not|never|please don't|without talking|no|nunca|please)(?: \S+){0,2}|\b(?:sin hablar|without asking)`),
	mustClaimRule(RuleReplace, []string{"DRUG"}, `\b(?:instead of|in place of|replaces?|replacing|replacement for|swap|trade|as well as|as good as|`+
		`better than|stronger than|same job|does everything|alternative to|beats|new|`+
		`en vez de|en lugar de|igual que|mejor que|mas potente que|reemplaza\w*|sustitu\w*|cambia\w*|alternativa natural a|`+
		`le gana\w*|como tu nueva?|hace lo mismo|igual de \S+ que)`+gap(3)+` DRUG\b`+
		`|\bDRUG\b`+gap(4)+` (?:same job|hace lo mismo|por|for)`+gap(3)+` FOOD\b`,
		`\b(?:can't|cannot|no food|nothing|ningun|ningun alimento|no)(?: \S+){0,2}`),
	mustClaimRule(RuleDiagnose, []string{"COND", "SYM"}, `\b(?:sounds like|points? to|most likely|probably|likely have|means|you have|you've got|got|`+
		`it's|this is|that's|textbook|adds up to|definitely|stages of|signs of|sign that|my guess is|developing|equals|are|is|`+
		`suena a|apunta a|indica|indican|significa|tienes|padeces|padece|sufres de|desarrollando|lo tuyo es|seguro es|`+
		`eso es|esto es|es igual a|etapas de|signos de|senal|se nota que es|para mi es|eres|tiene usted|usted tiene|quieren decir)`+
		gap(3)+` COND\b|\bSYM(?: \S+){0,6} (?:means|mean|is a sign|tells me|gives it away|points to|sounds like|equals|are|is|`+
		`significa|indica|lo delata|quiere decir|es senal|apunta|es igual|lo confirma)\b`,
		asksEN+`|`+asksES+`|\b(?:whether|si|only|solo|can say|can tell|puede decir|diagnostica|diagnosed)`+gap(4)),
	mustClaimRule(RuleUnsafeSafety, []string{"PREG", "KID", "DRUG"}, `\b(?:safe|safely|no risk|without any risk|fine|harmless|any amount|`+
		`seguro|segura|seguros|sin riesgo|sin ningun riesgo|sin problema|no le pasa nada|en la cantidad)\b`+gap(6)+` (?:PREG|KID)\b`+
		`|\b(?:PREG|KID)(?: \S+){0,8} (?:without any risk|is fine|is safe|will be fine|safely|any amount|`+
		`sin riesgo|sin ningun riesgo|es seguro|sin problema|no le pasa nada|sin fijarte)\b`+
		`|\b(?:give|dale|darle|dele)\b`+gap(4)+` (?:KID|DRUG)\b`+gap(6)+` (?:DRUG|FOOD|DOSE|#)\b`+
		`|\b(?:PREG|KID)\b`+gap(8)+` (?:cure|cures|prevents|clears|fix|fixes|gets rid of|curan|cura|evita|quita|quitan|`+
		`le quita|se le quita|se le baja)\b`,
		negatedEN+`|`+negatedES+`|\b(?:ask|pregunta|pediatrician can|pediatra)`+gap(4)),
}

// ruleEvidence are the ids of every claim rule matching a piece (normal
// form): medical.go's English rules and the skeleton's.
func ruleEvidence(norm string) []string {
	return claimRuleHits(skeletonText(norm), medicalHits(norm))
}

// claimRuleHits are the ids of the claim rules matching a skeleton.
func claimRuleHits(sk string, ids []string) []string {
	for _, r := range claimRules {
		if !slices.ContainsFunc(r.needs, func(n string) bool { return strings.Contains(sk, n) }) {
			continue
		}
		for _, m := range r.re.FindAllStringIndex(sk, -1) {
			if r.unless != nil && r.unless.MatchString(sk[:m[0]]) {
				continue
			}
			ids = append(ids, r.id)
			break
		}
	}
	return ids
}
