package config

// Ledger is the cost ledger's section (docs/billing.md "Partitions").
type Ledger struct {
	// RetentionMonths keeps the records of this many whole UTC months
	// before the current one; an older month's partition is dropped once
	// `voxgate costs export` exported it. 0, the default, keeps every
	// month forever.
	RetentionMonths int `yaml:"retention_months"`
}

func (l Ledger) validate(bad func(key, format string, args ...any)) {
	if l.RetentionMonths < 0 || l.RetentionMonths > 1200 {
		bad("ledger.retention_months", "must be between 0 (keep forever) and 1200, got %d", l.RetentionMonths)
	}
}
