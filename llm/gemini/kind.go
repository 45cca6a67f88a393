package gemini

// Kind is the provider as the GenAI semantic conventions name it in
// traces (gen_ai.provider.name), whatever it is called in the config.
func (g *Gemini) Kind() string { return "gcp.gemini" }
