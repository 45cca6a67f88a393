package controlplane

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/realtime"
	"github.com/voxgate/voxgate/tools"
)

// checkConfig refuses a configuration that could not serve a session,
// naming the key.
func checkConfig(c config.Voice, contextTool string, reg *tools.Registry) error {
	switch {
	case c.Mode != ModeDirect && c.Mode != ModeSideband && c.Mode != ModeRelay && c.Mode != ModeLive:
		return fmt.Errorf("voice.mode: %q is not available; use %q, %q, %q or %q", c.Mode, ModeDirect, ModeSideband, ModeRelay, ModeLive)
	case c.Live.Model == "":
		return fmt.Errorf("voice.live.model is required")
	case c.Live.AcknowledgementDelay < 0 || c.Live.AcknowledgementDelay > 10*time.Second:
		return fmt.Errorf("voice.live.acknowledgement_delay must be from 0 to 10s")
	case c.Live.DelegationDeadline < time.Second || c.Live.DelegationDeadline > 2*time.Minute:
		return fmt.Errorf("voice.live.delegation_deadline must be from 1s to 2m")
	case c.Provider == "":
		return fmt.Errorf("voice.provider is required")
	case c.Model == "":
		return fmt.Errorf("voice.model is required")
	case c.Voice == "":
		return fmt.Errorf("voice.voice is required")
	case len(c.Voices) > 0 && !slices.Contains(c.Voices, c.Voice):
		return fmt.Errorf("voice.voices must include the default voice %q", c.Voice)
	case c.SecretTTL < realtime.MinSecretTTL || c.SecretTTL > realtime.MaxSecretTTL:
		return fmt.Errorf("voice.secret_ttl: %v not in [%v, %v]", c.SecretTTL, realtime.MinSecretTTL, realtime.MaxSecretTTL)
	case c.ToolCallsPerMinute < 1:
		return fmt.Errorf("voice.tool_calls_per_minute must be at least 1")
	case c.SweepInterval < 100*time.Millisecond:
		return fmt.Errorf("voice.sweep_interval must be at least 100ms")
	case c.IdleTimeout < time.Second:
		return fmt.Errorf("voice.idle_timeout must be at least 1s")
	case c.VADIdleTimeout != 0 && (c.VADIdleTimeout < 5*time.Second || c.VADIdleTimeout > 30*time.Second):
		return fmt.Errorf("voice.vad_idle_timeout: %v not in [5s, 30s] (the provider's range), or 0 for off", c.VADIdleTimeout)
	case c.VADIdleTimeout != 0 && c.IdleTimeout < c.VADIdleTimeout+5*time.Second:
		return fmt.Errorf("voice.idle_timeout must be at least voice.vad_idle_timeout + 5s (a silent user's call is quiet that long between prompts)")
	case c.AttachWithin < 0 || c.AttachWithin > time.Minute:
		return fmt.Errorf("voice.attach_within must be from 0 to 1m")
	case c.LeaseRenew < 10*time.Millisecond || c.LeaseTTL < 2*c.LeaseRenew:
		return fmt.Errorf("voice: the lease TTL must be at least twice its renewal interval")
	}
	if contextTool != "" {
		if err := reg.CheckContextTool(contextTool); err != nil {
			return fmt.Errorf("voice.context_tool: %w", err)
		}
	}
	return nil
}

// usageCeilings lays the file's voice.usage_ceilings over DefaultCeilings,
// in name order so that the first bad key named is always the same one.
func usageCeilings(overrides map[string]int64) (Ceilings, error) {
	c := DefaultCeilings()
	for _, name := range slices.Sorted(maps.Keys(overrides)) {
		if err := c.Set(name, overrides[name]); err != nil {
			return Ceilings{}, err
		}
	}
	return c, nil
}
