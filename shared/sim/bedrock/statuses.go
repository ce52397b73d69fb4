package bedrock

// The simulators' own copy of the services' documented words and limits; they
// never import the product's, so a wrong product table shows up as a failing test.

// Bedrock batch job statuses (GetModelInvocationJob, "Batch Inference Job State Change").
const (
	bedrockSubmitted          = "Submitted"
	bedrockValidating         = "Validating"
	bedrockScheduled          = "Scheduled"
	bedrockInProgress         = "InProgress"
	bedrockCompleted          = "Completed"
	bedrockPartiallyCompleted = "PartiallyCompleted"
	bedrockFailed             = "Failed"
	bedrockStopping           = "Stopping"
	bedrockStopped            = "Stopped"
	bedrockExpired            = "Expired"
)
