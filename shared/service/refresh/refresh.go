// Package refresh keeps the account's model facts: it reads them (Bedrock's
// foundation models, inference profiles, availability and batch quotas; the
// AWS Price List's prices of those models; the Anthropic Models API when a
// key is configured), stores them in the table as one snapshot per Region,
// and lays them over the deployment's catalog (see model.Catalog.Apply), so
// submits, list_models and the split read what the account says today. The
// reconciler refreshes once a day; a cold start loads the stored snapshot and
// refreshes it when it is older than MaxAge; a function that only reads the
// facts (mcp) reloads the stored snapshot every DefaultReloadEvery while warm
// (Reloader).
package refresh

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/model"
	"github.com/mcpbatch/mcpbatch/shared/store"
)

// DefaultMaxAge is how old the stored facts may be before a refresh.
const DefaultMaxAge = 24 * time.Hour

// BedrockReader fills an account snapshot from Bedrock and Service Quotas.
type BedrockReader interface {
	Read(ctx context.Context, a *model.Account) error
}

// PriceReader fills an account snapshot's PriceList from the AWS Price
// List (shared/pricing), after the Bedrock read named the models.
type PriceReader interface {
	Read(ctx context.Context, a *model.Account) error
}

// AnthropicReader lists the Anthropic API's models.
type AnthropicReader func(ctx context.Context) ([]model.AnthropicFacts, error)

// Service is the refresh use case. Its fields are its dependencies.
type Service struct {
	Store store.Snapshots
	// Catalog is the deployment's catalog the facts are laid over.
	Catalog *model.Catalog
	// Bedrock reads the AWS account (nil: no Bedrock facts).
	Bedrock BedrockReader
	// Anthropic reads GET /v1/models (nil: no Anthropic key configured).
	Anthropic AnthropicReader
	// Prices reads the Price List (nil: the catalog's prices only; only the
	// reconciler's role may call pricing:GetProducts).
	Prices PriceReader
	Region string
	MaxAge time.Duration
	Now    func() time.Time
	Log    *slog.Logger
}

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now().UTC()
	}
	return time.Now().UTC()
}

func (s *Service) maxAge() time.Duration {
	if s.MaxAge > 0 {
		return s.MaxAge
	}
	return DefaultMaxAge
}

func (s *Service) log() *slog.Logger {
	if s.Log != nil {
		return s.Log
	}
	return slog.Default()
}

// Key is the snapshot's key in the store: one per Region.
func (s *Service) Key() string { return "models#" + s.Region }

// Load reads the stored snapshot and lays it over the catalog; store.ErrNotFound
// when none is stored.
func (s *Service) Load(ctx context.Context) (*model.Account, error) {
	a, err := s.stored(ctx)
	if err != nil {
		return nil, err
	}
	s.Catalog.Apply(a, s.now())
	return a, nil
}

func (s *Service) stored(ctx context.Context) (*model.Account, error) {
	snap, err := s.Store.GetSnapshot(ctx, s.Key())
	if err != nil {
		return nil, err
	}
	var a model.Account
	if err := json.Unmarshal(snap.Data, &a); err != nil {
		return nil, fmt.Errorf("account facts %s: %w", s.Key(), err)
	}
	if err := a.Validate(); err != nil {
		return nil, err
	}
	a.Version = snap.Version
	return &a, nil
}

// Refresh reads the account now, stores the snapshot over the one read (a
// concurrent refresh that stored first wins, and its snapshot is used) and
// lays it over the catalog.
func (s *Service) Refresh(ctx context.Context) (*model.Account, error) {
	var prev int64
	old, err := s.stored(ctx)
	switch {
	case err == nil:
		prev = old.Version
	case errors.Is(err, store.ErrNotFound):
	default:
		// An unreadable snapshot (a newer format) is replaced, not fatal.
		s.log().WarnContext(ctx, "stored account facts unreadable; replacing them", "error", err)
		if snap, gerr := s.Store.GetSnapshot(ctx, s.Key()); gerr == nil {
			prev = snap.Version
		}
	}
	a, err := s.read(ctx, old)
	if err != nil {
		return nil, err
	}
	data, err := json.Marshal(a)
	if err != nil {
		return nil, fmt.Errorf("account facts: %w", err)
	}
	v, err := s.Store.PutSnapshot(ctx, s.Key(), prev, data, a.UpdatedAt)
	if errors.Is(err, store.ErrConflict) {
		return s.Load(ctx) // another refresh stored first: same account, same hour
	}
	if err != nil {
		return nil, fmt.Errorf("store account facts: %w", err)
	}
	a.Version = v
	s.Catalog.Apply(a, s.now())
	s.log().InfoContext(ctx, "account model facts refreshed", "region", s.Region, "bedrock_models", len(a.Bedrock),
		"profiles", len(a.Profiles), "anthropic_models", len(a.Anthropic), "gaps", a.Gaps, "bytes", len(data))
	if len(a.UnmatchedQuotas) > 0 {
		// Their quotas are not applied: the defaults stand for whichever model they meant.
		s.log().WarnContext(ctx, "quotas naming no model of the account", "region", s.Region, "unmatched_quotas", a.UnmatchedQuotas)
	}
	if a.PriceList != nil {
		r := s.Catalog.PriceReport()
		s.log().InfoContext(ctx, "model prices refreshed", "region", s.Region, "endpoint", a.PriceList.Endpoint,
			"from_price_list", r.FromList, "unpriced", r.Unpriced, "differ", len(r.Differ),
			"unmatched", len(r.Unmatched), "unclassified", len(r.Unclassified), "report", r.String())
	}
	return a, nil
}

// read asks the sources. Bedrock's foundation-model list failing fails the
// read; every other failure is a gap the snapshot names. A failed Price List
// read keeps the prices the stored snapshot (old, nil: none) had read.
func (s *Service) read(ctx context.Context, old *model.Account) (*model.Account, error) {
	a := &model.Account{Region: s.Region, UpdatedAt: s.now()}
	if s.Bedrock != nil {
		if err := s.Bedrock.Read(ctx, a); err != nil {
			return nil, fmt.Errorf("read the account's models: %w", err)
		}
	}
	if s.Prices != nil {
		if err := s.Prices.Read(ctx, a); err != nil {
			a.Gaps = append(a.Gaps, model.GapPriceList+": "+err.Error())
			a.PriceList = nil
			if old != nil {
				a.PriceList = old.PriceList
			}
		}
	}
	if s.Anthropic != nil {
		ms, err := s.Anthropic(ctx)
		if err != nil {
			a.Gaps = append(a.Gaps, model.GapAnthropic+": "+err.Error())
		}
		a.Anthropic = ms
	}
	return a, nil
}

// Fresh loads the stored snapshot and refreshes it when it is missing or
// older than MaxAge: the cold start and the reconciler's daily refresh. On a
// failed refresh a stored snapshot, however old, stays laid over the
// catalog, and the error is returned for the caller to log.
func (s *Service) Fresh(ctx context.Context) (*model.Account, error) {
	a, err := s.stored(ctx)
	if err == nil && s.now().Sub(a.UpdatedAt) < s.maxAge() {
		if cur := s.Catalog.Account(); cur == nil || cur.Version != a.Version || !cur.UpdatedAt.Equal(a.UpdatedAt) {
			s.Catalog.Apply(a, s.now())
		}
		return a, nil
	}
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		s.log().WarnContext(ctx, "stored account facts unreadable", "error", err)
	}
	fresh, rerr := s.Refresh(ctx)
	if rerr != nil {
		if a != nil {
			s.Catalog.Apply(a, s.now())
			return a, fmt.Errorf("refresh account facts (keeping those of %s): %w", a.UpdatedAt.Format(time.RFC3339), rerr)
		}
		return nil, rerr
	}
	return fresh, nil
}
