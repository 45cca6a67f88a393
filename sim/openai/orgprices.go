package openai

import (
	"fmt"
	"math/big"
)

// The simulator's own price list: what OpenAI publishes for each model it
// serves and bills, read from the providers' pages
// (../shared/reference/models.md and the pages each row names), written
// here as the pages print them — US dollars per 1M tokens, or per minute
// of audio for a model billed by duration. It is deliberately not the
// gateway's table (billing/prices.yaml): the organization costs it serves
// are the provider's side of a reconciliation, and a side that priced
// with the ledger's own table could never disagree with it (docs/sim.md,
// "Prices").

// listed is one model's row on the price list. An empty figure is a class
// the page prints no price for.
type listed struct {
	source string
	// Text tokens. cacheWrite is the price of prompt tokens written to
	// the cache, on the models that bill them (their pages' "Cache
	// writes" row, the 30-minute TTL); cacheWrite12h the price of a write
	// a request asked to live 12 hours (prompt_cache_options.ttl), where
	// a page prints one. The simulator ignores prompt_cache_retention.
	textIn, textCached, cacheWrite, cacheWrite12h, textOut string
	audioIn, audioCached, audioOut                         string
	imageIn, imageCached                                   string
	// perMinute is the price of a minute of audio for the models billed
	// by duration, prorated to the millisecond.
	perMinute string
}

// openAIPrices is OpenAI's price list as the simulator bills it, standard
// tier.
func openAIPrices() map[string]listed {
	realtime := listed{source: "OpenAI model page, gpt-realtime-2.1 (models.md)",
		textIn: "4.00", textCached: "0.40", textOut: "24.00",
		audioIn: "32.00", audioCached: "0.40", audioOut: "64.00",
		imageIn: "5.00", imageCached: "0.50"}
	retired := realtime
	retired.source, retired.textOut = "OpenAI model page, gpt-realtime (text output $16, models.md)", "16.00"
	mini := listed{source: "OpenAI model page, gpt-realtime-2.1-mini (models.md)",
		textIn: "0.60", textCached: "0.06", textOut: "2.40",
		audioIn: "10.00", audioCached: "0.30", audioOut: "20.00",
		imageIn: "0.80", imageCached: "0.08"}
	miniRetired := mini
	miniRetired.source = "OpenAI model page, gpt-realtime-mini (2.1-mini's page compares their input: the same)"
	return map[string]listed{
		// Chat, prompts up to 272K tokens (the simulator's are far below).
		"gpt-6-luna": {source: "OpenAI model page, gpt-6-luna (models.md)",
			textIn: "0.10", textCached: "0.01", cacheWrite: "0.125", textOut: "0.50"},
		"gpt-6.1-terra": {source: "OpenAI model page, gpt-6.1-terra (models.md); 12 h write 3P (models.md, read again 2026-11-28)",
			textIn: "1.00", textCached: "0.05", cacheWrite: "1.25", cacheWrite12h: "2.50", textOut: "5.00"},
		"gpt-6.2-sol": {source: "OpenAI model page, gpt-6.2-sol (models.md, read again 2026-11-28)",
			textIn: "2.00", textCached: "0.10", cacheWrite: "2.50", cacheWrite12h: "5.00", textOut: "10.00"},
		"gpt-5-mini": {source: "OpenAI model page, gpt-5-mini (3P: GitHub's model price table)",
			textIn: "0.25", textCached: "0.025", textOut: "2.00"},
		"gpt-4.1-mini": {source: "OpenAI model page, gpt-4.1-mini (3P: Vercel's AI Gateway page)",
			textIn: "0.40", textCached: "0.10", textOut: "1.60"},
		"gpt-4o-mini": {source: "OpenAI pricing page, gpt-4o-mini",
			textIn: "0.15", textCached: "0.075", textOut: "0.60"},

		"gpt-realtime-2.1":      realtime,
		"gpt-realtime-2.1-mini": mini,
		"gpt-realtime":          retired,
		"gpt-realtime-mini":     miniRetired,

		// Transcription billed by tokens. The pricing page lists these
		// models twice, a text-token row (input, output) and an
		// audio-token row (input); their model pages print one row, the
		// text row's figures, under "Audio tokens", which models.md flags.
		// The simulator takes the pricing page (docs/sim.md, "Prices").
		"gpt-4o-mini-transcribe": {source: "OpenAI pricing page, transcription: gpt-4o-mini-transcribe",
			textIn: "1.25", textOut: "5.00", audioIn: "3.00"},
		"gpt-4o-transcribe": {source: "OpenAI pricing page, transcription: gpt-4o-transcribe",
			textIn: "2.50", textOut: "10.00", audioIn: "6.00"},

		// Billed by duration.
		"whisper-1":            {source: "OpenAI pricing page, whisper-1", perMinute: "0.006"},
		"gpt-transcribe":       {source: "OpenAI model page, gpt-transcribe (models.md)", perMinute: "0.0045"},
		"gpt-live-transcribe":  {source: "OpenAI model page, gpt-live-transcribe (models.md)", perMinute: "0.017"},
		"gpt-realtime-whisper": {source: "OpenAI model page, gpt-realtime-whisper (models.md)", perMinute: "0.017"},
		"gpt-live-1":           {source: "OpenAI pricing page, gpt-live-1, active (gpt-live.md)", perMinute: "0.05"},
		"gpt-live-1.1":         {source: "OpenAI pricing page, gpt-live-1.1, active (gpt-live.md)", perMinute: "0.05"},
	}
}

// rates is a listed row read into exact fractions; nil is a class with no
// price.
type rates struct {
	textIn, textCached, cacheWrite, cacheWrite12h, textOut *big.Rat
	audioIn, audioCached, audioOut                         *big.Rat
	imageIn, imageCached                                   *big.Rat
	perMinute                                              *big.Rat
}

// read turns the page's figures into exact dollars.
func (l listed) read() (rates, error) {
	var r rates
	var err error
	for _, f := range []struct {
		to  **big.Rat
		fig string
	}{
		{&r.textIn, l.textIn}, {&r.textCached, l.textCached}, {&r.cacheWrite, l.cacheWrite}, {&r.cacheWrite12h, l.cacheWrite12h},
		{&r.textOut, l.textOut},
		{&r.audioIn, l.audioIn}, {&r.audioCached, l.audioCached}, {&r.audioOut, l.audioOut},
		{&r.imageIn, l.imageIn}, {&r.imageCached, l.imageCached}, {&r.perMinute, l.perMinute},
	} {
		if f.fig == "" {
			continue
		}
		d, ok := new(big.Rat).SetString(f.fig)
		if !ok || d.Sign() < 0 {
			err = fmt.Errorf("%q is not a price in dollars", f.fig)
			continue
		}
		*f.to = d
	}
	return r, err
}

// priceList is the list read, by model.
type priceList map[string]rates

func readPrices(list map[string]listed) (priceList, error) {
	out := make(priceList, len(list))
	for m, l := range list {
		r, err := l.read()
		if err != nil {
			return nil, fmt.Errorf("sim: price of %s: %w", m, err)
		}
		out[m] = r
	}
	return out, nil
}

// of is the row model is billed at: its own, else its family's for a
// dated snapshot (a snapshot's model page shows its family's prices).
func (p priceList) of(model string) (rates, bool) {
	if r, ok := p[model]; ok {
		return r, true
	}
	if sub := snapshotRE.FindStringSubmatch(model); sub != nil {
		r, ok := p[sub[1]]
		return r, ok
	}
	return rates{}, false
}
