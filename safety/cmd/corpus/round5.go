package main

// A fifth round, added after the split like the fourth (round4.go): train
// part only, so the dev and test parts stay as dealt once. Written for
// two things seen on the train and dev parts alone:
//   - list fragments: a profile or a plan echoed as "label: items"
//     ("Current supplements: vitamin D, magnesium.", "Goals: lower
//     cholesterol.") read as claims, since the corpus held only prose; a
//     claim written as a list item ("- cures diabetes", "Instead of
//     insulin: cinnamon") must still read as one, so both labels are
//     here;
//   - the structures cross-validation over the train and dev parts
//     showed the model misses (go test ./safety -run TestCrossValidate
//     -cv): a remedy measured against what the doctor gives, a medicine
//     called harmful, "studies prove", a diagnosis read as certain from
//     one sign, a remedy said to be safe in any amount in pregnancy, a
//     child's condition blamed on a food with the pediatrician skipped.
var trainOnly5 = []struct {
	lang, label string
	ts          []tmpl
}{
	{"en", "benign", []tmpl{
		{"list", "Current supplements: {remedy}, {food}."},
		{"list", "[Goals|Your goals|Goal]: [lower cholesterol|steadier blood sugar|better sleep|lower blood pressure|more energy]."},
		{"list", "[Conditions|Health notes|What you told me]: {cond}."},
		{"list", "[Medications|Current meds|Your medicines]: {med}, as prescribed by {pro}."},
		{"list", "- {dish}\n"},
		{"list", "[Allergies|Avoid]: {allergen}, {allergen}."},
		{"list", "[Diet|Eating style]: [vegetarian|low sodium|Mediterranean|diabetes-friendly|high fibre]. Goals: more {nutr}."},
		{"list", "1. [Walk|Stretch|Cycle] for {min} minutes\n"},
		{"list", "- [Check|Note] your blood sugar [before|after] {ex}\n"},
		{"list", "Shopping list: {food}, {food}, {food}."},
		{"list", "Profile: {cond}, takes {med}, allergic to {allergen}."},
		{"list", "- [Ask|Tell] {pro} about {med}\n"},
		{"list", "Breakfast: {dish}. Lunch: {dish}."},
		{"list", "Questions for {pro}: {med} timing, {sym}."},
		{"hedged", "Eating well helps, but no food is a treatment for {cond}."},
		{"hedged", "{remedy} is not a cure for {cond}, whatever you may read."},
		{"hedged", "There's no diet that replaces the treatment {pro} gives you for {cond}."},
		{"hedged", "{dish} is a good meal, not a remedy for {cond}."},
		{"hedged", "It's a myth that {remedy} [cures|treats|reverses] {cond}."},
		{"hedged", "Claims that {remedy} cures {cond} aren't backed by good evidence."},
	}},
	{"es", "benign", []tmpl{
		{"list", "Suplementos actuales: {remb}, {ingrb}."},
		{"list", "[Objetivos|Tus objetivos|Meta]: [bajar el colesterol|azúcar más estable|dormir mejor|bajar la presión|más energía]."},
		{"list", "[Condiciones|Notas de salud|Lo que me contaste]: {enfb}."},
		{"list", "[Medicamentos|Tus medicinas]: {tumed}, según te indicó {pro}."},
		{"list", "- {platillo}\n"},
		{"list", "[Alergias|Evitar]: {alerg}, {alerg}."},
		{"list", "[Dieta|Estilo]: [vegetariana|baja en sodio|mediterránea|apta para diabéticos|alta en fibra]. Objetivo: más {nutr}."},
		{"list", "1. [Camina|Estira|Pedalea] {min} minutos\n"},
		{"list", "- [Mide|Anota] tu azúcar [antes|después] de {ejer}\n"},
		{"list", "Lista de compras: {ingrb}, {ingrb}, {ingrb}."},
		{"list", "Perfil: {enfb}, toma {tumed}, alergia a {alerg}."},
		{"list", "- [Pregúntale|Coméntale] a {pro} sobre {tumed}\n"},
		{"list", "Desayuno: {platillo}. Comida: {platillo}."},
		{"list", "Preguntas para {pro}: horario de {tumed}, {sint}."},
		{"hedged", "Comer bien ayuda, pero ningún alimento es un tratamiento para {enfb}."},
		{"hedged", "{rem} no es una cura para {enf}, leas lo que leas."},
		{"hedged", "Ninguna dieta reemplaza el tratamiento que te da {pro} para {enfb}."},
		{"hedged", "{platillo} es una buena comida, no un remedio para {enf}."},
		{"hedged", "Es un mito que {rem} [cure|trate|revierta] {enf}."},
		{"hedged", "Lo de que {rem} cura {enf} no tiene buena evidencia."},
	}},
	{"en", "claim", []tmpl{
		{"list", "- [cures|reverses|gets rid of] {cond}\n"},
		{"list", "Instead of {med}: {remedy} {freq}."},
		{"list", "[Remedy|Natural fix] for {cond}: {remedy}, no pills needed."},
		{"list", "1. Stop {med}\n"},
		{"list", "[Dose|Take]: {dose} of {remedy} {freq} for {cond}."},
		{"list", "Diagnosis: {sym} means {cond}."},
		{"treat", "{remedy} does more for {cond} than anything {pro} can prescribe."},
		{"stopmed", "Your {med} is hurting you more than it helps; drop it."},
		{"replace", "{remedy} is every bit as effective as {med}."},
		{"cure", "Research has proven that {remedy} cures {cond}."},
		{"diagnose", "{sym} is a sure sign of {cond}, no test needed."},
		{"childpreg", "{remedy} is completely safe {preg}, take as much as you like."},
		{"childpreg", "{kid}'s {kidcond} comes from dairy; cut it and you won't need the pediatrician."},
		{"childpreg", "{remedy} clears {kid}'s {kidcond} quicker than any medicine."},
		{"replace", "What doctors won't tell you is that {remedy} works better than {med}."},
	}},
	{"es", "claim", []tmpl{
		{"list", "- [cura|revierte|elimina] {enf}\n"},
		{"list", "En lugar de {tumed}: {remb} {frec}."},
		{"list", "[Remedio|Solución natural] para {enf}: {rem}, sin pastillas."},
		{"list", "1. Deja {tumed}\n"},
		{"list", "[Dosis|Toma]: {dosis} de {remb} {frec} para {enf}."},
		{"list", "Diagnóstico: {sint} quiere decir {enf}."},
		{"treat", "{rem} hace más por {enf} que cualquier cosa que te recete {pro}."},
		{"stopmed", "{tumed} te hace más daño que bien; mejor suspende el tratamiento."},
		{"replace", "{rem} es tan eficaz como tomar {med}."},
		{"cure", "Está comprobado que {rem} cura {enf}."},
		{"diagnose", "{sint} es señal segura de {enf}, no hace falta análisis."},
		{"childpreg", "{rem} es totalmente seguro en el embarazo, toma todo lo que quieras."},
		{"childpreg", "Lo de {nino} es por la leche; quítasela y no necesitas al pediatra."},
		{"stopmed", "No hace falta seguir con {tumed} si ya comes sano."},
		{"replace", "Lo que los médicos no te dicen es que {rem} funciona mejor que tomar {med}."},
	}},
}
