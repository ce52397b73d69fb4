package job

// SageMaker asynchronous and real-time inference limits, as the
// InvokeEndpointAsync and InvokeEndpoint APIs document them.
const (
	// SageMakerMaxInlineBody is the largest Body InvokeEndpointAsync takes inline;
	// bigger bodies go to object storage and are sent as InputLocation.
	SageMakerMaxInlineBody = 128_000
	// SageMakerMaxInputLocation is the longest InputLocation URI.
	SageMakerMaxInputLocation = 1024
	// SageMakerMaxCustomAttributes is the longest CustomAttributes header value.
	SageMakerMaxCustomAttributes = 1024
	// SageMakerMaxRealtimeBody is InvokeEndpoint's request payload limit (6 MB).
	SageMakerMaxRealtimeBody = 6 * 1024 * 1024

	SageMakerMinInvocationTimeout = 1
	SageMakerMaxInvocationTimeout = 3600
	SageMakerMinRequestTTL        = 60
	SageMakerMaxRequestTTL        = 21600
	// SageMakerMaxEndpointName is the endpoint name limit (^[a-zA-Z0-9](-*[a-zA-Z0-9])*$, ≤ 63).
	SageMakerMaxEndpointName = 63
)
