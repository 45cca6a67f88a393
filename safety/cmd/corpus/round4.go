package main

import "strings"

// A fourth round, added after the split was dealt: these families go to
// the train part only, so the dev and test parts stay as they were dealt
// once. Written for structures cross-validation over the train and dev
// parts showed the model misreads (go test ./safety -run TestCrossValidate
// -cv): cooking measures that are also dose words (gotas, pastilla de
// caldo, cucharadas), a medicine named in a sentence that keeps it,
// debunking and reported claims, and claims built as a verdict ("esto no
// es X, es Y"), a comparison with a medicine, or a dose changed by a
// meal.
var trainOnly = []struct {
	lang, label string
	ts          []tmpl
}{
	{"es", "benign", []tmpl{
		{"cooking", "Agrega unas gotas de vainilla a {platillo} justo antes de servir."},
		{"cooking", "Disuelve una pastilla de caldo de pollo en el agua de {platillo}."},
		{"cooking", "Termina {platillo} con unas gotas de aceite de oliva y {ingrb}."},
		{"cooking", "Pon dos cucharadas de {ingrb} y una pizca de sal por porción."},
		{"cooking", "La dosis justa de chile para {platillo} es media cucharadita si no te gusta picante."},
		{"cooking", "Exprime medio limón sobre {platillo} y sírvelo tibio."},
		{"cooking", "Si {platillo} queda muy ácido, corrígelo con unas gotas de miel."},
		{"cooking", "Guarda {platillo} en el refrigerador hasta {num} días en un recipiente cerrado."},
		{"hedged", "Sigue tomando {tumed} como te indicó {pro} y cuéntale si empiezas un suplemento."},
		{"hedged", "Ningún alimento sustituye {tumed}; {platillo} puede ser parte de una semana equilibrada."},
		{"hedged", "Se dice que {rem} cura {enf}, pero no hay estudios que lo respalden."},
		{"hedged", "Es un mito que {rem} reemplace a la {med}."},
		{"hedged", "Antes de cambiar la dosis de {tumed}, habla con {pro}."},
		{"hedged", "Si notas {sint}, lo mejor es que lo revise {pro}."},
		{"hedged", "No dejes {tumed} sin hablarlo antes con {pro}."},
		{"hedged", "Leerás que {rem} previene {enf}; la evidencia no lo confirma."},
		{"hedged", "{pro} puede decirte si {rem} interfiere con {tumed}."},
		{"hedged", "Con {enfb}, {pro} es quien ajusta el tratamiento; yo te ayudo con las recetas."},
		{"nutrition", "{ingr} aporta {nutr} y es fácil de sumar a {platillo}."},
		{"nutrition", "Una porción de {platillo} tiene unas {kcal} calorías."},
		{"nutrition", "Las personas con {enfb} pueden disfrutar {platillo} cuidando la porción."},
		{"nutrition", "{ingr} tiene un índice glucémico bajo, útil si cuidas el azúcar en sangre."},
		{"fitness", "Después de {ejer}, un vaso de agua y {ingr} son un buen refrigerio."},
		{"fitness", "Si te duelen las piernas tras {ejer}, descansa y estira con calma."},
		{"allergen", "Si eres alérgico a {alerg}, revisa la etiqueta de {platillo}."},
		{"kids", "Para {nino}, corta {ingr} en trozos pequeños y sírvelo tibio."},
	}},
	{"en", "benign", []tmpl{
		{"cooking", "Finish {dish} with a few drops of lemon juice and a pinch of salt."},
		{"cooking", "Dissolve a bouillon cube in the water before adding {food}."},
		{"cooking", "Add two tablespoons of {food} per serving."},
		{"hedged", "Keep taking your {med} as prescribed, and ask {pro} before adding a supplement."},
		{"hedged", "No food replaces {med}; {dish} can be part of a balanced week."},
		{"hedged", "You'll read that {remedy} cures {cond}, but there's no good evidence for it."},
		{"hedged", "Before changing your {med} dose, talk to {pro}."},
		{"hedged", "If you notice {sym}, it's worth having {pro} take a look."},
		{"nutrition", "{food} brings {nutr} and fits easily into {dish}."},
		{"fitness", "After {ex}, water and a bit of {food} make a good snack."},
	}},
	{"es", "claim", []tmpl{
		{"diagnose", "Eso no es cansancio, es {enf}."},
		{"diagnose", "Lo que describes, {sint}, es {enf} sin duda."},
		{"diagnose", "Seguro tienes {enf}, se nota por {sint}."},
		{"replace", "{rem} funciona igual que la {med}, así que puedes cambiarla."},
		{"replace", "{rem} es mejor que {tumed} y no tiene efectos secundarios."},
		{"dose", "Si comes {platillo}, sube {tumed} al doble esa noche."},
		{"dose", "Toma {dosis} de {remb} en lugar de {tumed}."},
		{"stopmed", "Ya no necesitas {tumed} si tomas {rem} {frec}."},
		{"stopmed", "Suspende {tumed} unos días y deja que {rem} haga su trabajo."},
		{"cure", "{rem} acaba con {enf} en pocas semanas."},
		{"treat", "Para {enf}, {rem} es todo el tratamiento que necesitas."},
		{"childpreg", "Puedes darle {med} a {nino} sin preguntarle a nadie."},
	}},
	{"en", "claim", []tmpl{
		{"diagnose", "That's not stress, it's {cond}."},
		{"replace", "{remedy} works just like {med}, so you can swap them."},
		{"dose", "If you eat {dish}, double your {med} that night."},
		{"stopmed", "You don't need your {med} anymore if you take {remedy} {freq}."},
		{"treat", "For {cond}, {remedy} is all the treatment you need."},
	}},
}

// addTrainOnly expands the rounds added after the split (this one and
// round5.go) into the train part, each family named by its round, leaving
// out any sentence the corpus already holds (in whatever part).
func addTrainOnly(rows []row) []row {
	seen := map[string]bool{}
	for _, r := range rows {
		seen[r.lang+"\t"+strings.ToLower(r.text)] = true
	}
	for _, round := range []struct {
		prefix string
		sets   []struct {
			lang, label string
			ts          []tmpl
		}
	}{{"train4.", trainOnly}, {"train5.", trainOnly5}} {
		for _, set := range round.sets {
			vocab := enVocab
			if set.lang == "es" {
				vocab = esVocab
			}
			for _, r := range expandAll(set.lang, set.label, set.ts, vocab) {
				if k := r.lang + "\t" + strings.ToLower(r.text); !seen[k] {
					seen[k] = true
					r.family = round.prefix + r.family
					r.split = "train"
					rows = append(rows, r)
				}
			}
		}
	}
	return rows
}
