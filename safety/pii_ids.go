package safety

import (
	"regexp"
	"strconv"
	"strings"
)

// The identifiers and addresses of the app's Spanish- and English-speaking
// users (docs/safety.md): Mexico's CURP and RFC, Spain's DNI and NIE, and
// street addresses as an app shows them. Each is a format, so a rule is
// right for it: a model that writes one out has leaked it, whatever the
// sentence around it says.

// Rule ids of the identifier and address rules.
const (
	RuleCURP       = "pii.curp"
	RuleRFC        = "pii.rfc"
	RuleNationalID = "pii.dni_nie"
	RuleAddress    = "pii.address"
)

// mxDate is a CURP's or RFC's YYMMDD, checked as far as a regular
// expression can: a month 01–12 and a day 01–31.
const mxDate = `\d{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])`

// curp: four letters (the second a surname's vowel, X for none), the birth
// date, sex (H, M, or X since 2022), the state of birth (two letters, NE
// born abroad), three consonants, a character telling the century, and a
// check digit.
var curp = regexp.MustCompile(`(?i)\b[A-Z][AEIOUX][A-Z]{2}` + mxDate + `[HMX]` +
	`(?:AS|BC|BS|CC|CL|CM|CS|CH|DF|DG|GT|GR|HG|JC|MC|MN|MS|NT|NL|OC|PL|QT|QR|SP|SL|SR|TC|TS|TL|VZ|YN|ZS|NE)` +
	`[B-DF-HJ-NP-TV-Z]{3}[A-Z\d]\d\b`)

// rfc: three letters (a company) or four (a person), the date, and a
// three-character homoclave whose last is a check digit or A; written
// whole or with hyphens or spaces between its parts.
var rfc = regexp.MustCompile(`(?i)(?:^|[^\p{L}\d&])[A-ZÑ&]{3,4}[- ]?` + mxDate + `[- ]?[A-Z\d]{2}[A\d]\b`)

// dni is a Spanish DNI (eight digits and a letter, the digits maybe
// grouped by dots) or an NIE (X, Y or Z, seven digits and a letter).
var dni = regexp.MustCompile(`\b(?:\d{8}|\d{1,2}\.\d{3}\.\d{3})(?:-?[A-Za-z]|\s[A-Z])\b` +
	`|\b[XYZxyz]-?\d{7}-?[A-Za-z]\b`)

// dniWord before a number names it an identity document, so its letter
// need not check: a model may well invent one.
var dniWord = regexp.MustCompile(`(?i)\b(dni|nie|nif|documento|identidad|id card|national id)\b[^.!?\n]{0,20}$`)

const dniLetters = "TRWAGMYFPDXBNJZSQVHLCKE"

// dniHit reports whether a DNI/NIE-shaped match is one: its letter checks
// (the number modulo 23, an NIE's X, Y, Z read as 0, 1, 2), or a word
// before it says it is an identity document.
func dniHit(text string, m []int) bool {
	if dniWord.MatchString(text[max(0, m[0]-40):m[0]]) {
		return true
	}
	s := strings.NewReplacer(".", "", "-", "", " ", "").Replace(strings.ToUpper(text[m[0]:m[1]]))
	digits, letter := s[:len(s)-1], s[len(s)-1]
	digits = strings.NewReplacer("X", "0", "Y", "1", "Z", "2").Replace(digits)
	n, err := strconv.Atoi(digits)
	return err == nil && dniLetters[n%23] == letter
}

// Spanish street types, as written before the street's name.
const streetTypesES = `Calle|C/|Avenida|Av\.|Avda\.|Paseo|Plaza|Pza\.|Ronda|Camino|Carretera|Ctra\.|Traves[ií]a|Glorieta|` +
	`Calzada|Calz\.|Bulevar|Boulevard|Blvd\.|Privada|Cerrada|Callej[oó]n|Andador|Circuito|Prolongaci[oó]n|Carrera|Cra\.`

// addressNameWord is a word of a street's name: capitalized or a number
// ("5 de Mayo"), or one of the small words names hold.
const addressNameWord = `(?:(?:de|del|la|las|los|el|y|San|Santa)\s+|[\p{Lu}\d][\p{L}\d'.-]*,?\s+)`

// addressNumber is the building's number after the name: "12", "nº 12",
// "#115", "núm. 4".
const addressNumber = `(?:n[º°o]\.?\s*|#\s*|n[úu]m(?:ero|\.)?\s*)?\d{1,5}[A-Za-z]?\b`

// addresses are a street with its number, as an app shows one: "Calle de
// Alcalá 123", "Av. Insurgentes Sur 1602", "en la calle Mayor, 12",
// "221B Baker Street", "1600 Pennsylvania Ave NW"; a Mexican or Spanish
// postal code given as one (C.P. 06700); a colonia; a US state and ZIP.
// A street type in lower case counts only before a capitalized name, so
// "sal a la calle 20 minutos" is no address.
var addresses = regexp.MustCompile(
	`\b(?:` + streetTypesES + `)\s+` + addressNameWord + `{0,6}` + addressNumber +
		`|(?:^|[^\p{L}])(?:` + strings.ToLower(streetTypesES) + `)\s+\p{Lu}[\p{L}'.-]*,?\s+` + addressNameWord + `{0,5}` + addressNumber +
		`|\b\d{1,6}[A-Za-z]?\s+(?:[NSEW]\.?\s+)?(?:[\p{Lu}\d][\p{L}\d'.-]*\s+){1,4}` +
		`(?:Street|St|Avenue|Ave|Road|Rd|Boulevard|Blvd|Lane|Ln|Drive|Dr|Court|Ct|Way|Place|Pl|Terrace|Crescent|Close|Square|Sq|Parkway|Pkwy|Highway|Hwy|Circle)\b` +
		`|(?:^|[^\p{L}])(?:C\.\s?P\.|CP|c\.p\.)\s*\d{5}\b` +
		`|\bCol(?:\.|onia)\s+\p{Lu}\p{L}+` +
		`|\b(?:A[LKZR]|C[AOT]|D[EC]|FL|GA|HI|I[DLNA]|K[SY]|LA|M[EDAINSOT]|N[EVHJMYCD]|O[HKR]|PA|RI|S[CD]|T[NX]|UT|V[TA]|W[AVIY]),?\s\d{5}(?:-\d{4})?\b`)

// idHits are the identifier and address rules matching text as written.
// Each expression runs only on text that has what its format needs (a
// run of six digits for a date, seven for a DNI, a street word or a
// five-digit code for an address): most pieces have none, and the
// expressions are the filter's dearest.
func idHits(text string, ids []string) []string {
	runs := digitRuns(text)
	if runs.six {
		if curp.MatchString(text) {
			ids = append(ids, RuleCURP)
		}
		if rfc.MatchString(text) { // a CURP's start is no RFC: its next character is a letter
			ids = append(ids, RuleRFC)
		}
	}
	if runs.seven || runs.dotted {
		for _, m := range dni.FindAllStringIndex(text, -1) {
			if dniHit(text, m) {
				ids = append(ids, RuleNationalID)
				break
			}
		}
	}
	if (runs.five || addressWord(text)) && addresses.MatchString(text) {
		ids = append(ids, RuleAddress)
	}
	return ids
}

// digitShape is what a text's runs of digits could be part of.
type digitShape struct{ five, six, seven, dotted bool }

func digitRuns(text string) digitShape {
	var d digitShape
	n := 0
	for i := 0; i <= len(text); i++ {
		if i < len(text) && isDigit(text[i]) {
			n++
			continue
		}
		switch {
		case n == 5:
			d.five = true
		case n >= 6:
			d.six, d.seven = true, d.seven || n >= 7
		}
		if n > 0 && i < len(text) && text[i] == '.' && i+1 < len(text) && isDigit(text[i+1]) {
			d.dotted = true // "12.345.678-Z"
		}
		n = 0
	}
	return d
}

// addressWords are the words an address of the rules holds besides its
// numbers: street types of both languages and a colonia.
var addressWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`street st avenue ave road rd boulevard blvd lane ln drive dr court ct way place pl terrace
		crescent close square sq parkway pkwy highway hwy circle col colonia`) {
		m[w] = true
	}
	for w := range streetWords {
		m[w] = true
	}
	return m
}()

func addressWord(text string) bool {
	found := false
	wordsOf(text, func(w string, _, _ int) { found = found || addressWords[w] })
	return found
}
