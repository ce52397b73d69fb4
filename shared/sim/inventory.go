package sim

// Inventories: what each simulator still holds, for soak tests that check no
// provider job was left behind (created and never tracked, or never stopped).
// They only read the simulator's state.

// HeldJob is one provider job a simulator holds, in the API's own words.
type HeldJob struct {
	// Ref is what the API returned at create: the job ARN (Bedrock), the batch
	// id (Anthropic) or the InferenceId (SageMaker async).
	Ref string
	// Name is the job name (Bedrock) or the endpoint (SageMaker); "" for Anthropic.
	Name   string
	Status string
	// Ended: the provider will not work on it any more.
	Ended bool
	// StopRequested: a stop or cancel reached the provider before it ended.
	StopRequested bool
}
