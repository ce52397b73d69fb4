package sagemaker

// The simulator's own copy of the documented service limits, so that a
// wrong product constant shows up as a failing test instead of being shared.
const (
	// InvokeEndpointAsync / InvokeEndpoint limits.
	// https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_runtime_InvokeEndpointAsync.html
	// https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_runtime_InvokeEndpoint.html
	smMaxEndpointName      = 63
	smMaxInlineBody        = 128_000
	smMaxInputLocation     = 1024
	smMinRequestTTL        = 60
	smMaxRequestTTL        = 21600
	smMinInvocationTimeout = 1
	smMaxInvocationTimeout = 3600
	smMaxRealtimeBody      = 6 * 1024 * 1024
	// UpdateEndpointWeightsAndCapacities DesiredWeightsAndCapacities: 1..10 entries.
	// https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_UpdateEndpointWeightsAndCapacities.html
	smMaxVariants = 10
)
