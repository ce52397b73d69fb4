package app

import (
	"fmt"
	"os"
	"strings"

	"github.com/mcpbatch/mcpbatch/shared/model"
	"github.com/mcpbatch/mcpbatch/shared/service/graph"
)

// Catalog loads the model catalog (the embedded one, with the operator's
// MCPBATCH_MODELS_FILE / MCPBATCH_MODELS_JSON applied) and keeps the models the
// providers allow. An allowed id the catalog does not know stops the function
// at init: without its limits and prices the suite could neither check a
// submit nor price a job.
func Catalog(d *graph.Deps, region string) error {
	cat, err := model.FromEnv(os.Getenv)
	if err != nil {
		return err
	}
	var ids []string
	for _, p := range d.Providers {
		ids = append(ids, p.Models()...)
	}
	if miss := cat.Missing(ids); len(miss) > 0 {
		return fmt.Errorf("allowed models %s have no entry in the model catalog; add them with %s (see README, model catalog)",
			strings.Join(miss, ", "), model.EnvModelsJSON)
	}
	d.Catalog, d.Region = cat.Filter("", ids), region
	return nil
}
