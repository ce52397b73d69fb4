package sagemaker

import "github.com/mcpbatch/mcpbatch/shared/sim"

// Async statuses of the SageMaker inventory: SageMaker has no status API for an
// async inference, these are the simulator's own words.
const (
	smAsyncQueued    = "Queued"
	smAsyncCompleted = "Completed"
	smAsyncFailed    = "Failed"
)

// Inventory lists every async inference the simulator has accepted, in order.
func (s *SageMakerSim) Inventory() []sim.HeldJob {
	s.init()
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]sim.HeldJob, 0, len(s.accepted))
	for _, a := range s.accepted {
		out = append(out, sim.HeldJob{Ref: a.id, Name: a.endpoint, Status: a.status, Ended: a.status != smAsyncQueued})
	}
	return out
}

// heldAsync is one accepted async inference; guarded by SageMakerSim.mu.
type heldAsync struct {
	id, endpoint, status string
}

// track records an accepted async inference and returns its entry.
func (s *SageMakerSim) track(id, endpoint string) *heldAsync {
	s.mu.Lock()
	defer s.mu.Unlock()
	a := &heldAsync{id: id, endpoint: endpoint, status: smAsyncQueued}
	s.accepted = append(s.accepted, a)
	return a
}

// settle records how an async inference ended.
func (s *SageMakerSim) settle(a *heldAsync, status string) {
	if a == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	a.status = status
}
