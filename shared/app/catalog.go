package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"

	"github.com/mcpbatch/mcpbatch/shared/model"
	"github.com/mcpbatch/mcpbatch/shared/service"
	"github.com/mcpbatch/mcpbatch/shared/service/graph"
	"github.com/mcpbatch/mcpbatch/shared/service/refresh"
	"github.com/mcpbatch/mcpbatch/shared/store"
)

// Catalog loads the model catalog (the embedded one, with the operator's
// MCPBATCH_MODELS_FILE / MCPBATCH_MODELS_JSON applied) and keeps the models the
// providers allow. An allowed id the catalog does not know is kept for the
// account's facts to supply (a model the account offers runs unpriced; see
// shared/service/refresh); until they do, a submit naming it is refused.
func Catalog(d *graph.Deps, region string) error {
	cat, err := model.FromEnv(os.Getenv)
	if err != nil {
		return err
	}
	var ids []string
	for _, p := range d.Providers {
		ids = append(ids, p.Models()...)
	}
	if miss := cat.Missing(ids); len(miss) > 0 && d.Log != nil {
		d.Log.Warn(fmt.Sprintf("allowed models %s have no entry in the model catalog: usable once the account's facts list them, or add them with %s (see README, model catalog)",
			strings.Join(miss, ", "), model.EnvModelsJSON))
	}
	d.Catalog, d.Region = cat.Filter("", ids), region
	return nil
}

// LoadModelFacts lays the account's stored model facts over core's catalog
// (FromEnv does, for every function; the reconciler also refreshes them,
// through shared/app/accountapp); none stored yet, or unreadable, leaves the
// embedded catalog. The Reloader it returns (nil: the store keeps no snapshots) reads
// them again while the function stays warm (see ReloadModelFacts).
func LoadModelFacts(ctx context.Context, core *service.Core, log *slog.Logger) *refresh.Reloader {
	snaps, ok := core.Store.(store.Snapshots)
	if !ok || core.Catalog == nil {
		return nil
	}
	r := &refresh.Reloader{Service: &refresh.Service{Store: snaps, Catalog: core.Catalog, Region: core.Region, Log: log}}
	if err := r.Load(ctx); err != nil && !errors.Is(err, store.ErrNotFound) {
		log.WarnContext(ctx, "account model facts not loaded", "error", err)
	}
	return r
}

// ReloadModelFacts has each request first reload the stored facts when the
// ones read are older than the Reloader's period (nil r: next as it is).
func ReloadModelFacts(next http.Handler, r *refresh.Reloader) http.Handler {
	if r == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.Maybe(req.Context())
		next.ServeHTTP(w, req)
	})
}
