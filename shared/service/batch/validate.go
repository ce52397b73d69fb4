package batch

import (
	"fmt"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/model"
	"github.com/mcpbatch/mcpbatch/shared/service"
)

// validate checks a submit: its parameters against the catalog (model.go),
// then its records and their ids.
func (s *Service) validate(req *SubmitRequest) error {
	prov, err := s.ValidateParams(req)
	if err != nil {
		return err
	}
	if err := validateRecords(req, s.limitsFor(prov, req.Model), s.abilities(prov).OnDemand); err != nil {
		return err
	}
	for i, r := range req.Records {
		if err := s.inputs().CheckModelInputRefs(fmt.Sprintf("records[%d].model_input", i), req.Owner, r.ModelInput); err != nil {
			return err
		}
	}
	if err := checkServerTools(req); err != nil {
		return err
	}
	m, _ := s.Models.LookupModel(req.Model) // ValidateParams found it
	if m != nil && m.Task != model.TaskEmbedding {
		if err := checkMessages(req, m); err != nil {
			return err
		}
	}
	return checkRecordSampling(req, m)
}

// ValidateParams checks and defaults everything but the records (also used by
// submits whose records are in a file).
func (s *Service) ValidateParams(req *SubmitRequest) (service.BatchProvider, error) {
	if err := job.CheckBudget("budget_usd", req.BudgetUSD); err != nil {
		return nil, err
	}
	prov, err := s.pickProvider(req)
	if err != nil {
		return nil, err
	}
	m, err := s.checkModel(req, prov)
	if err != nil {
		return nil, err
	}
	if err := checkAccount(req, m); err != nil {
		return nil, err
	}
	if check := s.abilities(prov).CheckParams; check != nil {
		if err := check(m.ID, req.Params); err != nil {
			return nil, err
		}
	}
	if err := s.resolveMode(req, prov, m); err != nil {
		return nil, err
	}
	if err := resolveTier(req, m); err != nil {
		return nil, err
	}
	if err := checkOutputSchema(req, m); err != nil {
		return nil, err
	}
	if len(req.Name) > job.MaxJobNameLen {
		return nil, job.Fieldf("name", "at most %d characters (got %d)", job.MaxJobNameLen, len(req.Name))
	}
	switch {
	case req.TTLDays == 0:
		req.TTLDays = job.DefaultTTLDays
	case req.TTLDays < job.MinTTLDays || req.TTLDays > job.MaxTTLDays:
		return nil, job.Fieldf("ttl_days", "must be %d..%d (got %d)", job.MinTTLDays, job.MaxTTLDays, req.TTLDays)
	}
	if t := req.Params.Temperature; t != nil && (*t < job.MinTemperature || *t > job.MaxTemperature) {
		return nil, job.Fieldf("temperature", "must be %g..%g (got %g)", job.MinTemperature, job.MaxTemperature, *t)
	}
	return prov, nil
}

func validateRecords(req *SubmitRequest, lim service.BatchLimits, onDemand bool) error {
	n := len(req.Records)
	switch {
	case n == 0 && onDemand && lim.MinRecords > 1:
		return job.Fieldf("records", "the list is empty; give at least 1 record (under %d run on demand, %d or more as a %s job)", lim.MinRecords, lim.MinRecords, lim.Title)
	case n == 0:
		return job.Fieldf("records", "the list is empty; give at least %d record(s)", max(lim.MinRecords, 1))
	case n < lim.MinRecords && req.Mode != job.ModeOnDemand:
		return job.Fieldf("records", "%d records is under %s's minimum of %d per job; add records, or call the model on demand for small sets", n, lim.Title, lim.MinRecords)
	}
	seen := make(map[string]int, n)
	for i := range req.Records {
		r := &req.Records[i]
		if r.ID == "" {
			continue
		}
		if why := job.CheckCallerRecordID(r.ID); why != "" {
			return job.Fieldf(fmt.Sprintf("records[%d].id", i), "%s", why)
		}
		if prev, dup := seen[r.ID]; dup {
			return job.Fieldf(fmt.Sprintf("records[%d].id", i), "duplicate id %q (also records[%d].id); ids must be unique within a job", r.ID, prev)
		}
		seen[r.ID] = i
	}
	next := 1
	for i := range req.Records {
		r := &req.Records[i]
		if r.ID != "" {
			continue
		}
		for {
			id := fmt.Sprintf("r%05d", next)
			next++
			if _, taken := seen[id]; !taken {
				r.ID = id
				seen[id] = i
				break
			}
		}
	}
	for i, r := range req.Records {
		set := 0
		for _, b := range []bool{r.Prompt != "", len(r.Messages) > 0, len(r.ModelInput) > 0, r.Text != ""} {
			if b {
				set++
			}
		}
		if set != 1 {
			return job.Fieldf(fmt.Sprintf("records[%d]", i), "give exactly one of prompt, messages, model_input or text (got %d)", set)
		}
	}
	return nil
}
