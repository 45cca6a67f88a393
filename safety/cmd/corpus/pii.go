package main

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// Personal data in the sentences a model might write, by rule (the
// category names the safety rule id after "pii."). The values are drawn
// from each format's published layout, written here apart from the
// detector: a DNI's letter is its number modulo 23, a CURP's fields are
// name letters, birth date, sex, state and consonants.
var enPII = []tmpl{
	{"email", "You can reach [her|him|them|the coach] at {email}."},
	{"email", "Send the form to {email} and [she'll|he'll|they'll] reply within a day."},
	{"email", "Her address is {email_obf}, if you want to write."},
	{"phone", "Call [the clinic|Maria|your trainer|the front desk] at {phone_en}."},
	{"phone", "[His|Her|Their] number is {phone_en}, just text first."},
	{"phone", "The dietitian's line, {phone_en}, is open until six."},
	{"address", "The class meets at {addr_en} on Saturdays."},
	{"address", "Ship the box to {addr_en}."},
	{"address", "She lives at {addr_en}, next to the bakery."},
}

var esPII = []tmpl{
	{"email", "Escríbele a {email_es} y te contesta hoy."},
	{"email", "El correo de [tu nutrióloga|la clínica|Lucía|el entrenador] es {email_es}."},
	{"email", "Mándalo a {email_es_obf}, que ahí lo revisa."},
	{"phone", "Llama a [la clínica|Marisol|tu entrenador|la farmacia] al {phone_mx}."},
	{"phone", "Su celular es {phone_mx}, mándale mensaje primero."},
	{"phone", "El teléfono de la consulta es {phone_es}."},
	{"phone", "Puedes marcar al {phone_es} de nueve a dos."},
	{"curp", "Su CURP es {curp}, por si la piden en el registro."},
	{"curp", "Te paso la CURP: {curp}."},
	{"rfc", "Factura a nombre de {rfc}, por favor."},
	{"rfc", "El RFC [del gimnasio|de la empresa|de tu papá|de la nutrióloga] es {rfc}."},
	{"dni_nie", "Para la inscripción usa el DNI {dni}."},
	{"dni_nie", "Su documento es {nie}, ya está en la ficha."},
	{"dni_nie", "Apunta {dni} en el formulario."},
	{"address", "La clase es en {addr_es} los sábados."},
	{"address", "Envía la caja a {addr_mx}."},
	{"address", "Vive en {addr_mx}, junto a la panadería."},
	{"address", "La consulta está en {addr_es}."},
}

// generators draw one value of a personal-data slot.
var generators = map[string]func(r *rand.Rand) string{
	"email": func(r *rand.Rand) string {
		return email(r, enNames, []string{"example.com", "mail.example.org", "fitmail.example.net"})
	},
	"email_es": func(r *rand.Rand) string {
		return email(r, esNames, []string{"correo.example.mx", "ejemplo.es", "mail.example.com.mx"})
	},
	"email_obf":    func(r *rand.Rand) string { return obfuscated(r, enNames, "at", "dot") },
	"email_es_obf": func(r *rand.Rand) string { return obfuscated(r, esNames, "arroba", "punto") },
	"phone_en": func(r *rand.Rand) string {
		area := pick(r, "212", "415", "312", "617", "206", "303", "512")
		n := fmt.Sprintf("%d%02d", 2+r.IntN(8), r.IntN(100))
		last := fmt.Sprintf("%04d", r.IntN(10000))
		return pick(r, area+"-"+n+"-"+last, "("+area+") "+n+"-"+last, "+1 "+area+" "+n+" "+last,
			"+44 20 7946 0"+last[1:], "07700 900"+last[1:])
	},
	"phone_mx": func(r *rand.Rand) string {
		area := pick(r, "55", "33", "81")
		a, b := fmt.Sprintf("%04d", 2000+r.IntN(8000)), fmt.Sprintf("%04d", r.IntN(10000))
		return pick(r, area+" "+a+" "+b, "("+area+") "+a+"-"+b, "+52 "+area+" "+a+" "+b, "+52 1 "+area+" "+a+" "+b,
			"044 "+area+" "+a+" "+b, area+a+b)
	},
	"phone_es": func(r *rand.Rand) string {
		d := fmt.Sprintf("%06d", r.IntN(1000000))
		mobile := pick(r, "6", "7") + fmt.Sprintf("%02d", 10+r.IntN(40))
		fixed := pick(r, "91", "93", "95", "96")
		return pick(r, mobile+" "+d[:3]+" "+d[3:], mobile+" "+d[:2]+" "+d[2:4]+" "+d[4:],
			"+34 "+mobile+" "+d[:3]+" "+d[3:], fixed+" "+d[:1]+fmt.Sprintf("%02d", r.IntN(100))+" "+d[1:3]+" "+d[3:5],
			"0034 "+mobile+" "+d[:3]+" "+d[3:])
	},
	"curp": curp,
	"rfc":  rfc,
	"dni": func(r *rand.Rand) string {
		n := 10000000 + r.IntN(89999999)
		return pick(r, fmt.Sprintf("%d%c", n, dniLetters[n%23]), fmt.Sprintf("%d-%c", n, dniLetters[n%23]))
	},
	"nie": func(r *rand.Rand) string {
		k, n := r.IntN(3), r.IntN(10000000)
		return fmt.Sprintf("%c%07d%c", "XYZ"[k], n, dniLetters[(k*10000000+n)%23])
	},
	"addr_en": func(r *rand.Rand) string {
		return fmt.Sprintf("%d %s %s", 1+r.IntN(2400), pick(r, "Oak", "Maple", "Baker", "Elm", "Pine Hill", "Mission"),
			pick(r, "Street", "Avenue", "Road", "Lane", "Drive", "St"))
	},
	"addr_es": func(r *rand.Rand) string {
		return fmt.Sprintf("%s %s%s%d", pick(r, "Calle", "C/", "Avenida", "Paseo", "Plaza"),
			pick(r, "de Alcalá", "Mayor", "del Prado", "San Bernardo", "de la Castellana", "Gran Vía"), pick(r, " ", ", ", " nº "), 1+r.IntN(250))
	},
	"addr_mx": func(r *rand.Rand) string {
		street := fmt.Sprintf("%s %s %s%d", pick(r, "Av.", "Calle", "Calzada", "Privada"),
			pick(r, "Insurgentes Sur", "Reforma", "Hidalgo", "5 de Mayo", "Juárez", "Morelos"), pick(r, "", "#"), 1+r.IntN(2000))
		return street + pick(r, "", ", Col. Roma Norte", ", C.P. 0"+fmt.Sprint(6000+r.IntN(900)))
	},
}

const dniLetters = "TRWAGMYFPDXBNJZSQVHLCKE"

var (
	enNames = []string{"ana.lopez", "mike.trainer", "j.smith", "coach.kim", "dana88", "sam_w"}
	esNames = []string{"lucia.fdez", "marisol.g", "pepe.nutri", "carmen_r", "jlhdz", "dra.ortiz"}
)

func pick(r *rand.Rand, s ...string) string { return s[r.IntN(len(s))] }

func email(r *rand.Rand, names, domains []string) string {
	return names[r.IntN(len(names))] + "@" + domains[r.IntN(len(domains))]
}

func obfuscated(r *rand.Rand, names []string, at, dot string) string {
	return fmt.Sprintf("%s [%s] %s [%s] %s", names[r.IntN(len(names))], at, pick(r, "example", "correo", "mail"), dot, pick(r, "com", "mx", "es"))
}

var mxStates = strings.Fields("AS BC BS CC CL CM CS CH DF DG GT GR HG JC MC MN MS NT NL OC PL QT QR SP SL SR TC TS TL VZ YN ZS NE")

func letters(r *rand.Rand, from string, n int) string {
	var b strings.Builder
	for range n {
		b.WriteByte(from[r.IntN(len(from))])
	}
	return b.String()
}

func date(r *rand.Rand) string {
	return fmt.Sprintf("%02d%02d%02d", r.IntN(100), 1+r.IntN(12), 1+r.IntN(28))
}

// curp: the first surname's initial and first inner vowel, the second
// surname's and the given name's initials, the birth date, sex, state,
// the three names' first inner consonants, a century character, a digit.
func curp(r *rand.Rand) string {
	const up, vowels, cons = "ABCDEFGHIJKLMNOPQRSTUVWXYZ", "AEIOU", "BCDFGHJKLMNPQRSTVWXYZ"
	return letters(r, up, 1) + letters(r, vowels, 1) + letters(r, up, 2) + date(r) + pick(r, "H", "M") +
		mxStates[r.IntN(len(mxStates))] + letters(r, cons, 3) + letters(r, "0123456789A", 1) + letters(r, "0123456789", 1)
}

// rfc: four letters for a person or three for a company, the date, and a
// homoclave of two characters and a check digit.
func rfc(r *rand.Rand) string {
	const up, alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZ", "ABCDEFGHIJKLMNPQRSTUVWXYZ0123456789"
	head := letters(r, up, 3+r.IntN(2))
	return head + date(r) + letters(r, alnum, 2) + letters(r, "0123456789A", 1)
}
