package safety

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/nyaruka/phonenumbers"
)

// PII rule ids.
const (
	RuleEmail = "pii.email"
	RulePhone = "pii.phone"
	RuleName  = "pii.name"
)

// email is an address, or one written to dodge a filter ("ana [at]
// example [dot] com", "ana [arroba] ejemplo [punto] mx").
var email = regexp.MustCompile(`(?i)[a-z0-9._%+\-]{1,64}@[a-z0-9\-]{1,63}(\.[a-z0-9\-]{1,63})*\.[a-z]{2,24}\b` +
	`|(?i)\b[a-z0-9._%+\-]{1,64}\s*[\[(]\s*(at|arroba)\s*[\])]\s*[a-z0-9\-]{1,63}\s*[\[(]\s*(dot|punto)\s*[\])]\s*[a-z]{2,24}\b`)

// phoneRegions are tried, in order, for a number written without its
// country code: the regions the seeds' apps serve. A number with "+" or
// "00" names its own.
var phoneRegions = []string{"US", "GB", "DE", "FR", "ES", "MX", "IT", "NL", "IE", "BR", "IN", "AU", "CA"}

// mxLegacy are the prefixes Mexicans still write before a number that
// Mexico's 2019 plan dropped: 044 and 045 (a mobile, dialled from a fixed
// line), 01 (long distance), and 1 after +52 (a mobile from abroad).
var mxLegacy = regexp.MustCompile(`^(?:\+52[ .-]?1|04[45]|01)[ .-]?(\(?\d{2,3}\)?[ .-]?\d{3,4}[ .-]?\d{4})$`)

// notPhone are shapes that are never phone numbers, however many digits
// they have: dates, and decimals.
var notPhone = regexp.MustCompile(`^(\d{4}[-./]\d{1,2}[-./]\d{1,2}|\d{1,2}[-./]\d{1,2}[-./]\d{2,4}|\d+\.\d+)$`)

// idWords before a number make it an identifier, not a phone number.
var idWords = regexp.MustCompile(`(?i)\b(order|orders|id|ref|reference|code|invoice|ticket|tracking|barcode|sku|upc|ean|gtin|batch|lot|serial|` +
	`account|booking|confirmation|member|membership|receipt|transaction|item|product|recipe|isbn|version|zip|postcode|postal code|` +
	`pedido|orden|folio|factura|referencia|c[oó]digo|lote|cuenta|reserva|reservaci[oó]n|confirmaci[oó]n|socio|recibo|` +
	`transacci[oó]n|art[ií]culo|producto|receta|versi[oó]n|c[oó]digo postal|gu[ií]a|rastreo|seguimiento|tarjeta)` +
	`\s*(no\.?|number|num\.?|n\.?\s?[º°o]\.?|n[úu]mero|#|:|is|es)?\s*(#|:)?\s*$|#\s*$`)

// unitWords after a number make it a quantity.
var unitWords = regexp.MustCompile(`(?i)^\s*(kcal|cal|calories|kj|g|grams?|kg|mg|mcg|ml|l|litres?|liters?|oz|lbs?|steps|min|mins|minutes|` +
	`hours?|h|sec|seconds|km|m|miles?|%|x|servings?|pieces?|bpm|iu|` +
	`calor[ií]as|gramos?|kilos?|litros?|pasos|minutos|horas?|segundos|porciones|raciones|piezas?|tazas?|cucharadas?|cucharaditas?)\b`)

// phoneCandidates are the runs of text that could be phone numbers: digits
// with single separators (space, hyphen, dot, parentheses), an optional
// leading "+", 7 to 15 digits, every group after the second at least two
// digits long. The library confirms them (phoneHit); its own matcher is
// not implemented, so finding them is voxgate's.
func phoneCandidates(s string) [][2]int {
	var out [][2]int
	for i := 0; i < len(s); {
		c := s[i]
		if !(c == '+' || c == '(' || isDigit(c)) || (i > 0 && wordByte(s[i-1])) {
			i++
			continue
		}
		end, digits, ok := scanPhone(s, i)
		if ok && digits >= 7 && digits <= 15 {
			out = append(out, [2]int{i, end})
		}
		if end <= i {
			end = i + 1
		}
		i = end
	}
	return out
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func wordByte(c byte) bool {
	return isDigit(c) || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == '.' || c == ',' || c >= 0x80
}

// scanPhone reads a candidate from s[i:]: its end, its digit count, and
// whether its groups have the shape of a phone number.
func scanPhone(s string, i int) (end, digits int, ok bool) {
	j := i
	if s[j] == '+' {
		j++
	}
	groups, group, lastSep := 0, 0, true
	shortGroup := false
	for ; j < len(s); j++ {
		c := s[j]
		switch {
		case isDigit(c):
			group++
			digits++
			lastSep = false
			continue
		case c == ' ' || c == '-' || c == '.' || c == '(' || c == ')':
			if lastSep && !(c == '(' || s[j-1] == ')') {
				break // two separators: the number has ended
			}
			if group > 0 {
				groups++
				if groups > 2 && group < 2 {
					shortGroup = true // "+33 1 42 68 53 00": only an area code may be one digit
				}
				group = 0
			}
			lastSep = true
			continue
		}
		break
	}
	if group > 0 {
		groups++
		if groups > 2 && group < 2 {
			shortGroup = true
		}
	}
	end = j
	for end > i && strings.IndexByte(" -.(", s[end-1]) >= 0 {
		end--
	}
	// A letter or digit run glued to the end makes it a word, not a number.
	if end < len(s) && end == j && wordByte(s[end]) && s[end] != '.' && s[end] != ',' {
		return end, digits, false
	}
	// A hyphen and a letter after it make it a code ("12345678-Z", a DNI).
	if end+1 < len(s) && s[end] == '-' && (s[end+1]|0x20 >= 'a' && s[end+1]|0x20 <= 'z') {
		return end, digits, false
	}
	return end, digits, !shortGroup && digits > 0
}

// phoneHit reports whether s[m[0]:m[1]] is a phone number: not a date,
// a decimal, an identifier or a quantity, and valid for its region as the library
// knows them.
func phoneHit(s string, m [2]int) bool {
	cand := s[m[0]:m[1]]
	if notPhone.MatchString(cand) || idWords.MatchString(s[max(0, m[0]-40):m[0]]) || unitWords.MatchString(s[m[1]:]) {
		return false
	}
	if m := mxLegacy.FindStringSubmatch(cand); m != nil {
		// Read as Mexican first; "0161 496 0753" is also a British number.
		if n, err := phonenumbers.Parse(m[1], "MX"); err == nil && phonenumbers.IsValidNumberForRegion(n, "MX") {
			return true
		}
	}
	if rest, ok := strings.CutPrefix(cand, "00"); ok {
		cand = "+" + rest
	}
	if strings.HasPrefix(cand, "+") {
		// The writer named the country: a number of a length that country
		// uses is a phone number, allocated or not.
		n, err := phonenumbers.Parse(cand, "")
		return err == nil && phonenumbers.IsPossibleNumber(n)
	}
	for _, region := range phoneRegions {
		if n, err := phonenumbers.Parse(cand, region); err == nil && phonenumbers.IsValidNumberForRegion(n, region) {
			return true
		}
	}
	return false
}

// commonNames are given names that are also everyday words, many of them
// foods: alone, such a name says nothing about the user (docs/safety.md).
var commonNames = map[string]bool{
	"ginger": true, "basil": true, "sage": true, "rose": true, "olive": true, "honey": true, "pepper": true,
	"rosemary": true, "saffron": true, "cinnamon": true, "clementine": true, "apple": true, "berry": true,
	"cherry": true, "peach": true, "plum": true, "kale": true, "bean": true, "rice": true, "summer": true,
	"autumn": true, "winter": true, "spring": true, "april": true, "may": true, "june": true, "august": true,
	"will": true, "bill": true, "mark": true, "pat": true, "sue": true, "joy": true, "hope": true, "faith": true,
	"grace": true, "rich": true, "sunny": true, "dawn": true, "eve": true, "ray": true, "sky": true,
	"river": true, "stone": true, "brook": true, "page": true, "hunter": true, "baker": true, "cook": true,
	"miller": true, "lemon": true, "lime": true, "mint": true, "daisy": true, "lily": true, "iris": true,
	"jasmine": true, "violet": true, "amber": true, "crystal": true, "hazel": true, "chase": true, "frank": true,
	"art": true, "max": true, "sandy": true, "candy": true, "cookie": true, "brandy": true, "sherry": true,
	"young": true, "long": true, "white": true, "brown": true, "green": true, "black": true, "king": true,
}

// names finds a display name in a piece (normal form): the whole name,
// and each of its words of three or more letters that is not also an
// everyday word. Word boundaries are Unicode letters and digits, so "Ana"
// is not found in "banana". Empty when there is nothing to find.
type names []string

func nameMatcher(display string) names {
	words := strings.FieldsFunc(strings.ToLower(display), func(r rune) bool {
		return !unicode.IsLetter(r) && r != '\'' && r != '-'
	})
	var alts names
	if len(words) > 0 && !(len(words) == 1 && commonNames[words[0]]) && utf8.RuneCountInString(strings.Join(words, "")) >= 2 {
		alts = append(alts, strings.Join(words, " "))
	}
	if len(words) > 1 {
		for _, w := range words {
			if utf8.RuneCountInString(w) >= 3 && !commonNames[w] {
				alts = append(alts, w)
			}
		}
	}
	return alts
}

// in reports whether a name is in norm as whole words.
func (ns names) in(norm string) bool {
	for _, n := range ns {
		for from := 0; ; {
			k := strings.Index(norm[from:], n)
			if k < 0 {
				break
			}
			k += from
			before, _ := utf8.DecodeLastRuneInString(norm[:k])
			after, _ := utf8.DecodeRuneInString(norm[k+len(n):])
			if (k == 0 || !wordRune(before)) && (k+len(n) == len(norm) || !wordRune(after)) {
				return true
			}
			from = k + 1
		}
	}
	return false
}

func wordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// piiHits are the PII rules matching a piece; text is the piece as
// written, norm its normal form.
func piiHits(text, norm string, name names) []string {
	var ids []string
	if strings.ContainsAny(text, "@[(") && email.MatchString(text) {
		ids = append(ids, RuleEmail)
	}
	for _, m := range phoneCandidates(text) {
		if phoneHit(text, m) {
			ids = append(ids, RulePhone)
			break
		}
	}
	if name.in(norm) {
		ids = append(ids, RuleName)
	}
	return idHits(text, ids)
}
