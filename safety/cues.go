package safety

import (
	"slices"
	"strings"
)

// Cue words are no risk — a recipe is full of them ("reduce the sauce",
// "stop stirring") — but they carry how a sentence about health is built:
// negation and hedging turn it, and verbs of effect, stopping, replacing,
// diagnosing and safety make it a claim. The claim model reads each also
// as its class, so a synonym it never saw in training still counts as one
// (docs/safety.md, "The detector").
const (
	cueNegation = "NEG"
	cueHedge    = "HEDGE"
	cueEffect   = "EFFECT"
	cueStop     = "STOP"
	cueReplace  = "REPL"
	cueDiagnose = "DIAG"
	cueSafe     = "SAFE"
)

var cueEntries = []struct{ class, words string }{
	{cueNegation, `not no don't doesn't didn't isn't aren't wasn't can't cannot won't shouldn't never nor without
		nunca ni sin tampoco jamas ningun ninguna ninguno nada`},
	{cueHedge, `may might could perhaps possibly some studies study research researchers evidence evidencia mixed early
		unclear unproven debated debate suggests suggest linked associated generally usually often typically claims claim
		whether estudio estudios investigacion investigaciones sugiere sugieren quiza quizas posiblemente algunos algunas
		preliminar concluyentes afirmaciones suele suelen generalmente todavia discute relacionan popular popularity`},
	{cueEffect, `lowers lower lowering reduces reduce reducing improves improve improving controls control controlling
		regulates regulate balances balance fixes fix fixed clears clear clearing wipes melts calms calm soothes eases ease
		settles shrinks blocks kills rebuilds regenerates undo undoes boosts reverses works working removes disappear
		disappears vanish gone goodbye beats beat flushes dissolves knocks stops
		baja bajan bajar reduce reducen mejora mejoran mejorar controla controlan controlar regula regular equilibra arregla
		limpia desaparece desaparecen calma calman desinflama encoge frena bloquea regenera deshacer acaba acabar funciona
		funcionan revierte olvidate adios cura curan`},
	{cueStop, `stop stopping quit quitting skip skipping ditch drop throw toss halve pause cancel taper wean off
		deja dejar dejes dejando suspende suspender suspendas tira saltate saltes salta pausa cancela bajale olvidate`},
	{cueReplace, `instead replace replacing replaces swap alternative substitute stronger better equal equally same
		vez lugar reemplaza reemplazar sustituye sustituir cambia cambiar igual alternativa potente mejor lugar`},
	{cueDiagnose, `sounds sound points likely probably most certainly clearly definitely means mean indicates indicate
		classic tells showing developing got
		suena apunta apuntan probable seguro segura significa significan indica indican senal delata padece padeces
		desarrollando tienes tiene`},
	{cueSafe, `safe safely harmless risk risks fine okay
		seguro segura riesgo riesgos problema pasa inofensivo`},
}

var cueWords = func() map[string]string {
	m := map[string]string{}
	for _, e := range cueEntries {
		for _, w := range strings.Fields(e.words) {
			if _, dup := m[w]; !dup {
				m[w] = e.class
			}
		}
	}
	return m
}()

// featureClasses are the lexicon's classes, food, and the cues.
var featureClasses = append(slices.Clone(lexClasses), lexFood,
	cueNegation, cueHedge, cueEffect, cueStop, cueReplace, cueDiagnose, cueSafe)
