package bedrock

// The simulators' own copy of the documented service rules below, so that a
// wrong product constant shows up as a failing test instead of being shared.
const (
	// CreateModelInvocationJob timeoutDurationInHours: 24..168.
	// https://docs.aws.amazon.com/bedrock/latest/APIReference/API_CreateModelInvocationJob.html
	bedrockMinTimeoutHours = 24
	bedrockMaxTimeoutHours = 168

	// The Bedrock batch state-change event on the default bus.
	// https://docs.aws.amazon.com/bedrock/latest/userguide/monitoring-eventbridge.html
	bedrockEventSource     = "aws.bedrock"
	bedrockEventDetailType = "Batch Inference Job State Change"
)
