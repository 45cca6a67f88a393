package safety

import (
	"slices"
	"testing"
)

// The Spanish and Mexican formats of DESIGN §12's personal data, and the
// text that looks like them and is not. The valid check letters were
// worked by hand from the DNI rule (the number modulo 23 indexes
// "TRWAGMYFPDXBNJZSQVHLCKE"; 12345678 = 23·536768 + 14, so Z); the CURPs
// and RFCs were composed field by field from their published layout.
func TestSpanishAndMexicanPII(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, text string
		want       []string
	}{
		{"MX local number", "Llámame al 55 1234 5678 mañana.", []string{RulePhone}},
		{"MX number, area in parentheses", "Tel. (33) 3616-1234", []string{RulePhone}},
		{"MX mobile from abroad with the old 1", "Escríbeme al +52 1 55 1234 5678.", []string{RulePhone}},
		{"MX mobile with the old 044", "Marca al 044 55 1234 5678.", []string{RulePhone}},
		{"MX with country code", "Su número es +52 81 8345 6789.", []string{RulePhone}},
		{"ES mobile in pairs", "Mi móvil es 612 34 56 78.", []string{RulePhone}},
		{"ES mobile with country code", "Llama al +34 612 345 678.", []string{RulePhone}},
		{"ES landline with 0034", "Oficina: 0034 91 123 45 67.", []string{RulePhone}},
		{"ES landline", "El fijo es el 91 123 45 67.", []string{RulePhone}},
		{"DNI", "Su DNI es 12345678Z.", []string{RuleNationalID}},
		{"DNI with hyphen, no keyword", "Apunta 12345678-Z en la ficha.", []string{RuleNationalID}},
		{"DNI with dots", "El titular 12.345.678-Z firmó.", []string{RuleNationalID}},
		{"NIE X", "NIE: X1234567L", []string{RuleNationalID}},
		{"NIE Y", "con el Y1234567X registrado", []string{RuleNationalID}},
		{"DNI named, letter wrong", "Su DNI es 12345678A.", []string{RuleNationalID}},
		{"CURP", "Tu CURP es GOMA850312MJCRRN04.", []string{RuleCURP}},
		{"CURP born abroad, lower case", "curp: pexl990101hnelps07", []string{RuleCURP}},
		{"RFC of a person", "Factura a nombre de RFC GOMA850312AB3.", []string{RuleRFC}},
		{"RFC of a company, hyphenated", "El RFC de la empresa es ABC-010203-XY9.", []string{RuleRFC}},
		{"address, Spain", "Te espero en Calle de Alcalá 123, Madrid.", []string{RuleAddress}},
		{"address, C/ with comma", "Envíalo a C/ Mayor, 12, 3º B.", []string{RuleAddress}},
		{"address, Mexico avenue", "Está en Av. Insurgentes Sur 1602.", []string{RuleAddress}},
		{"address, number sign", "Avenida Reforma #222, piso 3.", []string{RuleAddress}},
		{"address, lower-case street type", "vive en la calle Hidalgo 45", []string{RuleAddress}},
		{"address, numbered name", "Calle 5 de Mayo 23, Centro.", []string{RuleAddress}},
		{"postal code", "Colonia Roma Norte, C.P. 06700", []string{RuleAddress}},
		{"colonia alone", "Vive en la Colonia Narvarte.", []string{RuleAddress}},
		{"address, English", "Drop it at 221B Baker Street.", []string{RuleAddress}},
		{"address, US with direction", "1600 Pennsylvania Ave NW is the place.", []string{RuleAddress}},
		{"US state and ZIP", "Springfield, IL 62704", []string{RuleAddress}},
		{"obfuscated email in Spanish", "escribe a ana.lopez [arroba] correo [punto] mx", []string{RuleEmail}},

		{"order number", "Tu pedido 5512345678 llegará el lunes.", nil},
		{"folio", "El folio es 5512345678.", nil},
		{"servings and minutes", "Rinde 4 porciones; hornea 25 minutos a 180 grados.", nil},
		{"going out for a walk", "Sal a la calle 20 minutos después de comer.", nil},
		{"a square for ten minutes", "Camina por la plaza 10 minutos.", nil},
		{"blocks down a street", "Walk 5 blocks down Main Street.", nil},
		{"a date", "El 12/05/2024 empieza el plan.", nil},
		{"a code with a wrong check letter", "Código de lote X1234567Q.", nil},
		{"vitamin B12 and spoons", "Añade 1 cucharada de chía; aporta vitamina B12.", nil},
		{"a weight as eight digits", "El lote pesa 12345678 g.", nil},
		{"a step count", "Hoy diste 12345 pasos.", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := piiHits(tc.text, normal(tc.text), nil)
			if !slices.Equal(got, tc.want) {
				t.Fatalf("piiHits(%q) = %v, want %v", tc.text, got, tc.want)
			}
		})
	}
}
