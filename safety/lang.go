package safety

import "strings"

// Languages the filter reads (DESIGN §12: the recipe app's users speak
// English and Spanish).
const (
	English = "en"
	Spanish = "es"
)

// stopwords are the short words that make up much of any sentence of a
// language and are rare in the other: counting them tells a sentence's
// language from a few words on. Words both languages use ("a", "no",
// "me") are in neither list.
var stopwords = func() map[string]string {
	m := map[string]string{}
	for _, w := range strings.Fields(`the and of to in is it you your that for with this are be on as have not or can will
		my if so do don't at from they but what all just more than any it's i'm you're there these those was were has
		been an by about would should which their them our we how when why who into out up get some also`) {
		m[w] = English
	}
	for _, w := range strings.Fields(`el la los las de del y que en es un una por con para tu tus su sus se lo le les al
		como mas mi pero si ya muy esta esto eso son hay sin tambien cada hasta despues porque cuando donde tiene tienes
		puedes puede ser estar nos usted ustedes otro otra solo todo toda todos antes entre sobre ni ese esa`) {
		m[w] = Spanish
	}
	return m
}()

// DetectLanguage is the language of a sentence by its stopwords (and
// Spanish's ñ, accents and opening marks): "en", "es", or "" when the
// sentence is too short or too mixed to tell.
func DetectLanguage(text string) string {
	en, es := 0, 0
	wordsOf(text, func(w string, _, _ int) {
		switch stopwords[w] {
		case English:
			en++
		case Spanish:
			es++
		}
	})
	if strings.ContainsAny(text, "ñÑ¿¡") {
		es += 2
	}
	switch {
	case en > es:
		return English
	case es > en:
		return Spanish
	}
	return ""
}

// baseLanguage is a language tag's language when the filter reads it
// ("es-MX" is "es"), else "".
func baseLanguage(tag string) string {
	base, _, _ := strings.Cut(strings.ToLower(strings.TrimSpace(tag)), "-")
	base, _, _ = strings.Cut(base, "_")
	if base == English || base == Spanish {
		return base
	}
	return ""
}

// sentenceLanguage is the language a piece is read in: the caller's
// (Options.Language) when it named one the filter reads, else the
// piece's own, else English.
func sentenceLanguage(o Options, piece string) string {
	if l := baseLanguage(o.Language); l != "" {
		return l
	}
	if l := DetectLanguage(piece); l != "" {
		return l
	}
	return English
}
