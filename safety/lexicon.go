package safety

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// The risk lexicon (docs/safety.md): the words, in English and Spanish,
// without which a sentence makes no medical claim — a condition, a
// symptom, a medicine or a dose, a word of curing or diagnosing, an organ,
// a child or a pregnancy, a clinician. It does two jobs, and both need it
// broad rather than exact, since a word listed here only costs waiting:
//   - the stream holds a sentence from its first risk word to its end; a
//     sentence with none is let out word by word as it arrives (release.go);
//   - the claim model judges only sentences holding one (claims.go), so a
//     sentence the stream let out unjudged can never be a claim.
//
// Entries are folded words (lower case, no accents); "cur*" is a prefix,
// matching every word that starts with it. Words of both languages apply
// to every sentence, so a wrongly guessed language loses nothing.

// Lexicon classes: the claim model reads a sentence with each risk word
// also replaced by its class, so "stop your warfarin" and "stop your
// metformin" share features.
const (
	lexCondition = "COND"
	lexSymptom   = "SYM"
	lexDrug      = "DRUG"
	lexDose      = "DOSE"
	lexCure      = "CURE"
	lexBody      = "BODY"
	lexChild     = "KID"
	lexPregnancy = "PREG"
	lexClinician = "PRO"
	// Allergies are the app's daily vocabulary (a profile lists them, a
	// recipe warns of them): held like any risk word, but a class of
	// their own, so "your profile lists an allergy" never reads as a
	// diagnosis.
	lexAllergy = "ALLERGY"
)

var lexClasses = []string{lexDrug, lexDose, lexCondition, lexSymptom, lexCure, lexBody, lexChild, lexPregnancy, lexClinician, lexAllergy}

var lexiconEntries = map[string]string{
	lexAllergy: `allerg* alerg* intoleran* anaphyla* anafila*`,
	lexCondition: `diabet* prediabet* cancer* tumor* tumour* hypertens* hipertens* cholesterol* colesterol* triglycerid* triglicerid*
		arthrit* artrit* asthma* asma depress* depresi* anxiety ansiedad insomnia insomnio ibs crohn* colitis celiac* coeliac* celiaqui*
		thyroid* tiroid* hypothyroid* hipotiroid* hyperthyroid* hipertiroid* reflux* reflujo gerd migrain* migran* eczema* eccema psoria*
		gout gota anemi* anaemi* fatty osteopor* pcos poliquist* endometrio* adhd tdah alzheimer* dementia* demencia parkinson*
		disease* enfermedad* illness* disorder* trastorno* syndrome* sindrome* condition* infection* infeccion* infect* flu influenza gripe
		covid* cold colds resfriado* catarro* ulcer* ulcera* stroke* infarto* epilep* hiv vih hepatit* pneumon* neumon* bronchit* bronquit*
		bronquiolit* sinusit* sinus uti utis cystit* cistit* lupus fibromyalg* fibromialg* apnea apnoea neuropath* neuropat* glaucom*
		cataract* catarata* tinnitus shingles herpes zoster hemorrhoid* hemorroid* diverticul* candid* gastrit* gallstone* calculo* calculos
		vesicula stones piedras kidney* obes* sclerosis esclerosis autism* autismo dermatit* acne acné vitiligo
		hernia* insuficiencia resistencia mastit* preeclamps* miscarriage* aborto colic* colico* colicos croup otitis angina* anginas
		varicela chickenpox rsv strep estrenimiento constipation diarrh* diarrea* parasit* afib fibrillation fibrilacion copd epoc
		inflammation* inflamacion* inflamad* inflam* tumores leaky sepsis measles sarampion sida aids
		irritable renal renales reumatoide hiatal atopica poliquistico
		hashimoto* carpal carpiano tunel tapeworm* lombric* deficien* deficit* carencia* gastropares* malabsor* ferritin*
		cushing* addison* ictus barrett* empacho deprimid* depressed hyperactiv* hiperactiv* cyst* quiste* lice piojos jaundice
		ictericia sids wart warts verruga* sickness`,
	lexSymptom: `symptom* sintoma* sign signs senal* pain* dolor* ache* aching fever* fiebre cough* tos rash* sarpullido salpullido itch* comezon
		picazon swollen swelling hinchad* hinchazon dizz* mareo* nausea* vomit* fatigue* cansancio agotad* thirst* sed urinat* urine orina*
		orinar blurry borrosa stiff* rigidez bloat* palpitation* palpitaciones sweats sudor* numb* tingl* hormigueo cramp* calambre*
		colico* breath* aire faint* desmay* bleed* sangrad* bruis* moreton* wheez* migraine* headache* jaqueca* agruras heartburn ardor acidez congestion congestion`,
	lexDrug: `medic* medicin* medica* meds drug* farmaco* pill* pastilla* tablet* tableta* capsul* prescri* recetar recetan receto recetado recetada recetados recetadas insulin*
		metformin* statin* estatina* atorvastatin* lisinopril* levothyrox* levotirox* warfarin* thinner* anticoagul* antidepress*
		antidepres* sertralin* fluoxetin* inhaler* inhalador* antibiot* amoxicil* omeprazol* prednison* amlodipin* semaglut* gabapentin*
		allopurinol* alopurinol* methotrex* metotrex* losartan* enalapril* ibuprofen* ibuprofeno aspirin* aspirina* paracetamol* acetaminophen*
		glipizid* glibenclam* clonazepam* melatonin* antihist* steroid* esteroid* opioid* painkiller* analges* vaccin* vacun* chemo* quimio*
		tratamiento* treatment* therap* terapia* jarabe syrup suplement* supplement* birth anticoncept* hormone* hormona* antacid* antiacid*
		inyecc* inject* shot iodine yodo berberin*
		lipitor zoloft ozempic wegovy mounjaro nexium prilosec ambien epipen xanax januvia ventolin humira lexapro adderall ritalin
		flomax plavix jardiance crestor tamiflu celebrex lasix advil motrin tylenol glucophage bentyl synthroid lantus eliquis benadryl
		tums zyrtec claritin imodium pepto zofran imitrex prozac valium ativan xifaxan flonase lovaza aricept metamucil accutane
		diuretic* diuretico* blocker* betabloq* bloqueador* antiinflam* corticoid* cortison* hydrocortison* ppi lithium litio
		loratadin* cetirizin* clopidogrel salbutamol tamsulosin* furosemid* methylphenid* metilfenid* escitalopram* citalopram*
		trazodon* colchicin* tetracyclin* tetraciclin* codein* benzocain* laxative* laxante* nitrofurantoin* antiemetic*
		sintrom acenocumarol almax frenadol orfidal buscapina lexatin adiro eutirox fortasec dianben nolotil novalgina gelocatil
		enantyum dalsy apiretal`,
	lexDose: `dose* dosis dosage* mg mcg µg iu ui unit units unidad* drop drops gotas puff* milligram* miligram* microgram*
		microgram* refill* surtir taper* gram grams gramo gramos`,
	lexCure: `cur* heal* sana sanar sanan sano sanas sanara treat* trat* remed* reliev* alivi* revers* revier* revert* prevent* preven* previen*
		evit* diagnos* detox* desintox* immun* inmun* eliminat* elimin* eradicat* erradic* kill* mata matar combat* fight* protect* proteg*
		protej* regenerat* regener* flush* disuelv* dissolv* quita quitan quitar quitas`,
	lexBody: `blood sangre sugar azucar glucos* glucemi* glycem* pancrea* liver higado kidneys rinon* thyroid tiroides nerve* nervio*
		joint* articulac* immune inmune gut intestin* colon bowel stomach estomago heart corazon lung lungs pulmon* adrenal* suprarrenal*
		hormon* bones huesos pressure presion artery arteria* vein* vena* circulation circulacion metabolism metabolismo
		cell* celula* tumor* bacteria* virus* fung* hongo* tension pecho utero cervix`,
	lexChild: `baby babies bebe bebes infant* newborn* recien toddler* child* kid kids nino nina ninos ninas hijo hija hijos hijas
		teething bottle biberon pediatric* peque pequenos menor menores lactante* daughter daughters teen teens teenage* adolescent* preschool* nene nena`,
	lexPregnancy: `pregnan* embaraz* trimester* trimestre* breastfeed* breastfeeding amamant* lactancia gestation* gestacion* expecting
		conceive concebir fertility fertilidad miscarr* parto prenatal postpartum posparto nursing lactation* labor labour`,
	lexClinician: `doctor* doctora* physician* medico* medica gp nurse* enfermer* pharmacist* farmaceut* pediatrician* pediatra*
		endocrinolog* cardiolog* ginecolog* midwife partera dietitian* dietician* dietista* nutriolog* nutricionist* nutritionist*
		specialist* especialista* clinic* clinica* hospital* urgencias emergency emergencias
		matrona obstetric* obstetra* neurolog* nefrolog* oncolog* dermatolog* reumatolog* psicolog* surgeon* cirujan* colonoscop*
		endoscop*`,
}

// lexFood marks foods, drinks, herbs and supplements: no risk (a recipe
// is full of them), but the claim model reads them as a class, so what it
// learns of "cinnamon cures" holds for any food it has not seen there.
const lexFood = "FOOD"

var foodWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`turmeric cinnamon ginger garlic vinegar lemon lemons lime celery juice juices tea teas honey oats oat
		oatmeal chia flax flaxseed linseed beet beets beetroot melon fenugreek moringa spirulina kombucha broth coconut olive oil oils
		chocolate cocoa blueberries berries broccoli sprouts fish magnesium zinc vitamin vitamins elderberry oregano berberine
		ashwagandha probiotics probiotic kefir sauerkraut manuka seeds seed cayenne pepper aloe okra chamomile peppermint mint vegan
		keto fasting cleanse carnivore soda silver moss cod hibiscus pomegranate walnuts almonds nuts cranberry cranberries cherries
		cherry onion onions kale spinach quinoa rice yogurt salmon avocado lentils chickpeas beans tofu eggs coffee cola whiskey
		herbal herbs herb supplement garlic apple cider raw diet juicing smoothie smoothies kelp iodine collagen yeast bran
		canela curcuma jengibre ajo vinagre manzana limon miel avena chia linaza jugo zumo nopal nopales guayaba jamaica aceite coco
		boldo sabila bicarbonato caldo hueso espirulina kefir oregano magnesio vitamina ayuno dieta cetogenica manzanilla cardo
		mariano berberina levadura cerveza alcalina colageno cebolla morada epazote remolacha betabel alcachofa semilla
		aguacate cuachalalate arnica guanabana anis eucalipto arandano arandanos nueces almendras cafe infusion infusiones hierbas
		licuado chocolate cerezas toronja pomelo curry`) {
		m[w] = true
	}
	return m
}()

// lexicon is lexiconEntries read once: exact words and prefixes.
// A word listed under two classes takes the first in lexClasses.
var lexicon = func() (l struct {
	exact, prefix map[string]string
	maxPrefix     int
}) {
	l.exact, l.prefix = map[string]string{}, map[string]string{}
	for _, class := range lexClasses {
		for _, w := range strings.Fields(lexiconEntries[class]) {
			if p, ok := strings.CutSuffix(w, "*"); ok {
				if _, dup := l.prefix[p]; !dup {
					l.prefix[p] = class
				}
				l.maxPrefix = max(l.maxPrefix, len(p))
			} else if _, dup := l.exact[w]; !dup {
				l.exact[w] = class
			}
		}
	}
	return l
}()

// lexSuffixes are the endings of medical words a list cannot enumerate:
// diseases (-itis, -osis, -emia, -algia, -pathy) and the stems drug
// names are built from.
var lexSuffixes = []struct{ suffix, class string }{
	{"itis", lexCondition}, {"osis", lexCondition}, {"emia", lexCondition}, {"algia", lexCondition},
	{"pathy", lexCondition}, {"patia", lexCondition}, {"oma", lexCondition}, {"omas", lexCondition},
	{"statin", lexDrug}, {"statina", lexDrug}, {"pril", lexDrug}, {"sartan", lexDrug}, {"olol", lexDrug},
	{"azole", lexDrug}, {"azol", lexDrug}, {"mycin", lexDrug}, {"micina", lexDrug}, {"cillin", lexDrug},
	{"cilina", lexDrug}, {"formin", lexDrug}, {"formina", lexDrug}, {"gliptin", lexDrug}, {"gliptina", lexDrug},
	{"glutide", lexDrug}, {"glutida", lexDrug}, {"oxetine", lexDrug}, {"oxetina", lexDrug}, {"triptan", lexDrug},
	{"zepam", lexDrug}, {"zolam", lexDrug}, {"semide", lexDrug}, {"thiazide", lexDrug}, {"tiazida", lexDrug},
	{"profen", lexDrug}, {"profeno", lexDrug}, {"tidine", lexDrug}, {"tidina", lexDrug}, {"mab", lexDrug},
}

// lexClass is a folded word's risk class, "" for none. A food is none,
// though a prefix names it ("curcuma" is no cure).
func lexClass(w string) string {
	if c, ok := lexicon.exact[w]; ok {
		return c
	}
	if foodWords[w] {
		return ""
	}
	for n := min(len(w), lexicon.maxPrefix); n >= 2; n-- {
		if c, ok := lexicon.prefix[w[:n]]; ok {
			return c
		}
	}
	if len(w) > 5 {
		for _, s := range lexSuffixes {
			if strings.HasSuffix(w, s.suffix) {
				return s.class
			}
		}
	}
	return ""
}

// fold is a word as the lexicon and the claim model read it: lower case,
// the accents of Spanish (and French, Portuguese) dropped with ñ's tilde,
// straight apostrophes.
func fold(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf || s[i] >= 'A' && s[i] <= 'Z' {
			ascii = false
			break
		}
	}
	if ascii {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		r = unicode.ToLower(r)
		if k := strings.IndexRune(accented, r); k >= 0 {
			b.WriteByte(unaccented[utf8.RuneCountInString(accented[:k])])
			continue
		}
		if r == '’' || r == '‘' {
			r = '\''
		}
		b.WriteRune(r)
	}
	return b.String()
}

const (
	accented   = "áàâäãéèêëíìîïóòôöõúùûüñç"
	unaccented = "aaaaaeeeeiiiiooooouuuunc"
)

// wordsOf are the folded words of text: runs of letters and digits, with
// an apostrophe inside a word kept ("don't"), each with its byte span in
// text.
func wordsOf(text string, f func(w string, start, end int)) {
	start := -1
	for i, r := range text {
		inWord := unicode.IsLetter(r) || unicode.IsDigit(r)
		if !inWord && (r == '\'' || r == '’') && start >= 0 && i+utf8.RuneLen(r) < len(text) {
			next, _ := utf8.DecodeRuneInString(text[i+utf8.RuneLen(r):])
			inWord = unicode.IsLetter(next)
		}
		if inWord && start < 0 {
			start = i
		}
		if !inWord && start >= 0 {
			f(fold(text[start:i]), start, i)
			start = -1
		}
	}
	if start >= 0 {
		f(fold(text[start:]), start, len(text))
	}
}

// medicalRisk reports whether text holds a risk word: the claim model's
// gate.
func medicalRisk(text string) bool {
	found := false
	wordsOf(text, func(w string, _, _ int) {
		if !found && lexClass(w) != "" {
			found = true
		}
	})
	return found
}
