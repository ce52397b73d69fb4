package bedrock

import "github.com/mcpbatch/mcpbatch/shared/sim"

// Inventory lists every job the simulator has accepted, in creation order.
func (s *BedrockSim) Inventory() []sim.HeldJob {
	s.init()
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]sim.HeldJob, 0, len(s.order))
	for _, j := range s.order {
		out = append(out, sim.HeldJob{Ref: j.arn, Name: j.name, Status: j.status, Ended: ended(j.status),
			StopRequested: j.stoppedFrom != "" || j.status == bedrockStopping})
	}
	return out
}
