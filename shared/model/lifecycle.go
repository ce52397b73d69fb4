package model

import (
	"errors"
	"fmt"
	"slices"
	"time"
)

// ErrEndOfLife marks a refusal of a model past its end of life
// (errors.Is matches an *EndOfLifeError).
var ErrEndOfLife = errors.New("model past its end of life")

// EndOfLifeError says which model reached its end of life, when, and what
// to use instead.
type EndOfLifeError struct{ msg string }

func (e *EndOfLifeError) Error() string        { return e.msg }
func (e *EndOfLifeError) Is(target error) bool { return target == ErrEndOfLife }

// providerName is how messages name where a model runs.
func providerName(p string) string {
	switch p {
	case ProviderBedrock:
		return "Amazon Bedrock"
	case ProviderAnthropic:
		return "the Anthropic API"
	}
	return p
}

// lifecycleOK are the statuses a catalog row may carry.
var lifecycleOK = []string{LifecycleActive, LifecycleLegacy, LifecycleEndOfLife}

// Usable says whether the model may be used on day (UTC): a model at end of
// life, or legacy with an end-of-life date on or before day, is refused with
// an error wrapping ErrEndOfLife that names the date and the successor; a
// legacy model is accepted with a warning saying the same. The dates are the
// provider's; for Bedrock they hold "in most Regions" until the account
// refresh overlays what ListFoundationModels says for this Region.
func (m *Model) Usable(day time.Time) (warning string, err error) {
	l := m.Lifecycle
	if l == nil || l.Status == LifecycleActive || l.Status == "" {
		return "", nil
	}
	today := day.UTC().Format(time.DateOnly)
	past := l.EndOfLife != "" && l.EndOfLife <= today
	if l.Status == LifecycleEndOfLife || past {
		when := "has reached its end of life"
		if l.EndOfLife != "" {
			when = "reached its end of life on " + l.EndOfLife
		}
		return "", &EndOfLifeError{fmt.Sprintf("model %s (%s) %s on %s%s", m.ID, m.Name, when, providerName(m.Provider), m.successorText())}
	}
	w := fmt.Sprintf("model %s (%s) is legacy", m.ID, m.Name)
	if l.LegacySince != "" {
		w += " since " + l.LegacySince
	}
	if l.EndOfLife != "" {
		w += " and reaches its end of life on " + l.EndOfLife
	}
	return w + m.successorText(), nil
}

// EndOfLife is the refusal of a model past its end of life on day, looked
// up in every row of the catalog, those the deployment does not allow too,
// with the account's lifecycle laid over it where the account lists the
// model: a user naming Claude 3.5 Haiku learns it has reached its end of
// life and what replaces it, not that the deployment does not allow it. nil
// when the model is unknown or usable.
func (c *Catalog) EndOfLife(id string, day time.Time) error {
	m, ok := c.Lookup(id)
	if !ok {
		if m, ok = c.unfiltered().Lookup(id); !ok {
			return nil
		}
		if a := c.Account(); a != nil && m.Provider == ProviderBedrock {
			if i := slices.IndexFunc(a.Bedrock, func(am AccountModel) bool { return am.ID == m.ID }); i >= 0 {
				cp := *m
				cp.Lifecycle = lifecycleOf(&a.Bedrock[i], m.Lifecycle, day)
				m = &cp
			}
		}
	}
	if _, err := m.Usable(day); errors.Is(err, ErrEndOfLife) {
		return err
	}
	return nil
}

func (m *Model) successorText() string {
	if m.Lifecycle == nil || m.Lifecycle.Successor == "" {
		return ""
	}
	return "; use " + m.Lifecycle.Successor + " instead"
}

// validateLifecycle checks the row's lifecycle fields; successors are
// checked against the whole catalog in build.
func (m *Model) validateLifecycle() error {
	l := m.Lifecycle
	if l == nil {
		return nil
	}
	if !slices.Contains(lifecycleOK, l.Status) {
		return fmt.Errorf("lifecycle.status: %q must be one of active, legacy, end_of_life", l.Status)
	}
	if err := checkDate("lifecycle.legacy_since", l.LegacySince); err != nil {
		return err
	}
	if err := checkDate("lifecycle.end_of_life", l.EndOfLife); err != nil {
		return err
	}
	if l.LegacySince != "" && l.EndOfLife != "" && l.EndOfLife < l.LegacySince {
		return fmt.Errorf("lifecycle.end_of_life: %s is before legacy_since %s", l.EndOfLife, l.LegacySince)
	}
	if l.Status == LifecycleActive && (l.LegacySince != "" || l.EndOfLife != "") {
		return errors.New("lifecycle: an active model has no legacy_since or end_of_life; set status legacy")
	}
	if l.Successor == m.ID {
		return fmt.Errorf("lifecycle.successor: %q is the model itself", l.Successor)
	}
	return nil
}

// checkSuccessors refuses a successor the catalog does not hold, or one that
// is itself at end of life (a refusal would send the user in a circle).
func (c *Catalog) checkSuccessors() error {
	for _, m := range c.models {
		if m.Lifecycle == nil || m.Lifecycle.Successor == "" {
			continue
		}
		s, ok := c.index[m.Lifecycle.Successor]
		if !ok {
			return fmt.Errorf("catalog: model %q: lifecycle.successor: %q is not a model id in the catalog", m.ID, m.Lifecycle.Successor)
		}
		if s.Lifecycle != nil && s.Lifecycle.Status == LifecycleEndOfLife {
			return fmt.Errorf("catalog: model %q: lifecycle.successor: %q is itself at end of life", m.ID, s.ID)
		}
		if s.Provider != m.Provider {
			return fmt.Errorf("catalog: model %q: lifecycle.successor: %q is served by %s, not %s", m.ID, s.ID, s.Provider, m.Provider)
		}
	}
	return nil
}
