// Package billing prices provider usage in integer micro-USD (DESIGN §10):
// the versioned price table, the cost of a record, and the ledger finance
// reads.
package billing

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/voxgate/voxgate/internal/modelname"
)

//go:embed prices.yaml
var embeddedPrices []byte

// Class is a token class with its own price.
type Class int

// The token classes of DESIGN §10. Cached input is a subset of input.
const (
	TextIn Class = iota
	TextCachedIn
	TextOut
	AudioIn
	AudioCachedIn
	AudioOut
	ImageIn
	ImageCachedIn
	// TextCacheWriteIn is input written to the provider's prompt cache,
	// billed apart by the newer chat models; part of input, disjoint from
	// cached input.
	TextCacheWriteIn
	// TextCacheWrite12hIn is the part of the cache writes made under a
	// 12-hour TTL (OpenAI's prompt_cache_options.ttl "12h"), which costs
	// twice the 30-minute write. A table that lists no price for it
	// prices it at twice the model's text_cache_write_in (Price).
	TextCacheWrite12hIn
	numClasses
)

var classNames = [numClasses]string{
	"text_in", "text_cached_in", "text_out", "audio_in", "audio_cached_in", "audio_out", "image_in", "image_cached_in",
	"text_cache_write_in", "text_cache_write_12h_in",
}

func (c Class) String() string { return classNames[c] }

// MaxPrice bounds a price per 1M tokens (micro-USD): $100,000 per million
// tokens is far above any real price and keeps every sum inside 128 bits.
const MaxPrice = 100_000_000_000

// MaxPerMinute bounds a duration price (micro-USD per minute of audio).
const MaxPerMinute = 1_000_000_000

// ModelPrice is one model's prices. A class the provider does not bill is
// absent, not zero: tokens in an absent class make the record unpriced,
// because a $0 guess is how ledgers drift from invoices.
type ModelPrice struct {
	Source string
	Date   string
	per1M  [numClasses]int64
	has    [numClasses]bool
	// PerMinute prices audio by duration (models that report seconds, not
	// tokens); 0 with HasPerMinute false means the model is not so priced.
	PerMinute    int64
	HasPerMinute bool
	// dated are the model's later prices by day (dated.go); the
	// entry a lookup returns has them resolved and none left.
	dated []datedPrice
}

// Price is the micro-USD per 1M tokens of class c, and whether it is set.
// A 12-hour cache write the table prices not is twice the model's
// 30-minute write: OpenAI's pages state the rule ("a 12-hour write costs
// twice the 30-minute write") where they print a figure, and the ledger
// must never price a 12 h write at the cheaper rate (docs/billing.md).
func (m ModelPrice) Price(c Class) (int64, bool) {
	if c == TextCacheWrite12hIn && !m.has[c] && m.has[TextCacheWriteIn] {
		return 2 * m.per1M[TextCacheWriteIn], true
	}
	return m.per1M[c], m.has[c]
}

// Prices is a versioned price table. It is read-only once loaded.
type Prices struct {
	Version string
	models  map[string]ModelPrice
	at      time.Time // see At; zero prices at the time of the call
}

// DefaultPrices is the table embedded in the binary.
func DefaultPrices() (*Prices, error) { return LoadPrices(embeddedPrices) }

// priceFile is prices.yaml's shape. Pointers tell an absent class from 0.
type priceFile struct {
	Version string               `yaml:"version"`
	Models  map[string]priceYAML `yaml:"models"`
}

type priceYAML struct {
	Source         string      `yaml:"source"`
	Date           string      `yaml:"date"`
	TextIn         *micros     `yaml:"text_in"`
	TextCachedIn   *micros     `yaml:"text_cached_in"`
	TextOut        *micros     `yaml:"text_out"`
	AudioIn        *micros     `yaml:"audio_in"`
	AudioCachedIn  *micros     `yaml:"audio_cached_in"`
	AudioOut       *micros     `yaml:"audio_out"`
	ImageIn        *micros     `yaml:"image_in"`
	ImageCachedIn  *micros     `yaml:"image_cached_in"`
	CacheWriteIn   *micros     `yaml:"text_cache_write_in"`
	CacheWrite12h  *micros     `yaml:"text_cache_write_12h_in"`
	AudioPerMinute *micros     `yaml:"audio_per_minute"`
	Dated          []datedYAML `yaml:"dated"`
}

// micros is a price in whole micro-USD. The YAML decoder would truncate
// 1.5 into an int64 without a word; a price must be written as an integer.
type micros int64

func (m *micros) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" {
		return fmt.Errorf("line %d: %q is not a whole number of micro-USD", n.Line, n.Value)
	}
	var v int64
	if err := n.Decode(&v); err != nil {
		return err
	}
	*m = micros(v)
	return nil
}

// modelLine is the line of model's key in the table, for an error that
// must point at it; 0 if it cannot be found.
func modelLine(data []byte, model string) int {
	var doc yaml.Node
	if yaml.Unmarshal(data, &doc) != nil || len(doc.Content) == 0 {
		return 0
	}
	root := doc.Content[0]
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value != "models" {
			continue
		}
		models := root.Content[i+1]
		for j := 0; j+1 < len(models.Content); j += 2 {
			if models.Content[j].Value == model {
				return models.Content[j].Line
			}
		}
	}
	return 0
}

var dateRE = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)

// LoadPrices parses a price table (the embedded one, or an operator's
// override, which replaces it whole). Unknown keys, a missing version,
// source or date, and negative or absurd prices are errors naming the model.
func LoadPrices(data []byte) (*Prices, error) {
	var f priceFile
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("prices: %w", err)
	}
	if f.Version == "" {
		return nil, errors.New("prices: version is required")
	}
	if len(f.Models) == 0 {
		return nil, errors.New("prices: no models")
	}
	p := &Prices{Version: f.Version, models: make(map[string]ModelPrice, len(f.Models))}
	for name, y := range f.Models {
		m, err := y.modelPrice()
		if err != nil {
			return nil, fmt.Errorf("prices: line %d: model %q: %w", modelLine(data, name), name, err)
		}
		p.models[name] = m
	}
	return p, nil
}

func (y priceYAML) modelPrice() (ModelPrice, error) {
	m := ModelPrice{Source: y.Source, Date: y.Date}
	if y.Source == "" {
		return m, errors.New("source is required")
	}
	if !dateRE.MatchString(y.Date) {
		return m, errors.New("date must look like 2006-01-02")
	}
	vals := [numClasses]*micros{y.TextIn, y.TextCachedIn, y.TextOut, y.AudioIn, y.AudioCachedIn, y.AudioOut, y.ImageIn, y.ImageCachedIn, y.CacheWriteIn, y.CacheWrite12h}
	priced := false
	for c, v := range vals {
		if v == nil {
			continue
		}
		if *v < 0 || *v > MaxPrice {
			return m, fmt.Errorf("%s: %d not in [0, %d]", Class(c), *v, int64(MaxPrice))
		}
		m.per1M[c], m.has[c], priced = int64(*v), true, true
	}
	if y.AudioPerMinute != nil {
		if *y.AudioPerMinute < 0 || *y.AudioPerMinute > MaxPerMinute {
			return m, fmt.Errorf("audio_per_minute: %d not in [0, %d]", *y.AudioPerMinute, int64(MaxPerMinute))
		}
		m.PerMinute, m.HasPerMinute, priced = int64(*y.AudioPerMinute), true, true
	}
	if !priced {
		return m, errors.New("no prices")
	}
	dated, err := y.dated(m)
	m.dated = dated
	return m, err
}

// Lookup finds model's price: the name itself, else its family when the
// name is a dated snapshot (gpt-realtime-2025-08-28 → gpt-realtime); of a
// model with dated prices, the one valid at p's time (At).
func (p *Prices) Lookup(model string) (ModelPrice, bool) {
	m, ok := modelname.Lookup(p.models, model)
	if !ok {
		return m, false
	}
	if len(m.dated) == 0 {
		return m, true
	}
	return m.at(p.when()), true
}

// Require fails naming the first configured model (in sorted order) that
// has no price, so startup stops before a session could go unpriced.
func (p *Prices) Require(models ...string) error {
	sorted := append([]string(nil), models...)
	sort.Strings(sorted)
	for _, m := range sorted {
		if m == "" {
			continue
		}
		if _, ok := p.Lookup(m); !ok {
			return fmt.Errorf("prices: model %q has no price (version %s); add it to the price table", m, p.Version)
		}
	}
	return nil
}

// Models lists the priced model names, sorted.
func (p *Prices) Models() []string {
	out := make([]string, 0, len(p.models))
	for name := range p.models {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}
