package sagemaker

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	smsvc "github.com/mcpbatch/mcpbatch/shared/service/sagemaker"
)

// Notification is an async inference notification exactly as SageMaker publishes
// it to the success or error SNS topic (the notification format of
// https://docs.aws.amazon.com/sagemaker/latest/dg/async-inference-check-predictions.html).
type Notification struct {
	AwsRegion         string `json:"awsRegion"`
	EventTime         string `json:"eventTime"`
	ReceivedTime      string `json:"receivedTime"`
	InvocationStatus  string `json:"invocationStatus"`
	FailureReason     string `json:"failureReason,omitempty"`
	RequestParameters struct {
		Accept        string `json:"accept"`
		ContentType   string `json:"contentType"`
		EndpointName  string `json:"endpointName"`
		InputLocation string `json:"inputLocation"`
	} `json:"requestParameters"`
	ResponseParameters *struct {
		ContentType    string `json:"contentType"`
		OutputLocation string `json:"outputLocation"`
	} `json:"responseParameters,omitempty"`
	InferenceID  string `json:"inferenceId"`
	EventVersion string `json:"eventVersion"`
	EventSource  string `json:"eventSource"`
	EventName    string `json:"eventName"`
	// ResponseBody is present when the response is at most 128 KB.
	ResponseBody *struct {
		Content  string `json:"content"`
		Message  string `json:"message"`
		Encoding string `json:"encoding"`
	} `json:"responseBody,omitempty"`
}

// Event names SageMaker uses.
const (
	EventInferenceResult  = "InferenceResult"
	EventTestNotification = "TestNotification"
)

// ErrTestNotification is the {"eventName":"TestNotification"} SageMaker sends when
// an endpoint is created or updated: acknowledge it and do nothing.
var ErrTestNotification = errors.New("SageMaker test notification")

// ParseNotification decodes an SNS Message body into a service event.
func ParseNotification(msg []byte) (smsvc.SageMakerEvent, error) {
	var n Notification
	if err := json.Unmarshal(msg, &n); err != nil {
		return smsvc.SageMakerEvent{}, fmt.Errorf("SageMaker notification is not JSON: %w", err)
	}
	if n.EventName == EventTestNotification {
		return smsvc.SageMakerEvent{}, ErrTestNotification
	}
	if n.EventSource != "aws:sagemaker" || n.EventName != EventInferenceResult {
		return smsvc.SageMakerEvent{}, fmt.Errorf("not a SageMaker inference result (eventSource %q, eventName %q)", n.EventSource, n.EventName)
	}
	if n.InferenceID == "" {
		return smsvc.SageMakerEvent{}, errors.New("SageMaker notification without inferenceId")
	}
	ev := smsvc.SageMakerEvent{InferenceID: n.InferenceID, Status: n.InvocationStatus, FailureReason: n.FailureReason}
	switch n.InvocationStatus {
	case smsvc.SageMakerCompleted:
		if n.ResponseParameters == nil {
			return ev, fmt.Errorf("inference %s: Completed without responseParameters", n.InferenceID)
		}
		ev.OutputLocation, ev.ContentType = n.ResponseParameters.OutputLocation, n.ResponseParameters.ContentType
		if n.ResponseBody != nil {
			body, err := decodeBody(n.ResponseBody.Content, n.ResponseBody.Encoding)
			if err != nil {
				return ev, fmt.Errorf("inference %s: responseBody: %w", n.InferenceID, err)
			}
			ev.Body, ev.HasBody = body, true
		} else if ev.OutputLocation == "" {
			return ev, fmt.Errorf("inference %s: Completed with neither responseBody nor outputLocation", n.InferenceID)
		}
	case smsvc.SageMakerFailed:
		// The error topic may carry the model's own answer (≤ 128 KB): it says
		// why better than failureReason does, so it is kept.
		if n.ResponseBody != nil && n.ResponseBody.Content != "" {
			body, err := decodeBody(n.ResponseBody.Content, n.ResponseBody.Encoding)
			if err != nil {
				return ev, fmt.Errorf("inference %s: responseBody: %w", n.InferenceID, err)
			}
			ev.Body, ev.HasBody = body, true
		}
		if n.ResponseParameters != nil {
			ev.ContentType = n.ResponseParameters.ContentType
		}
	default:
		return ev, fmt.Errorf("inference %s: unknown invocationStatus %q", n.InferenceID, n.InvocationStatus)
	}
	return ev, nil
}

// decodeBody decodes responseBody.content: base64 when encoding says BASE64
// (SageMaker's documented form), else the text as given.
func decodeBody(content, encoding string) ([]byte, error) {
	b, err := base64.StdEncoding.DecodeString(content)
	switch {
	case err == nil && (encoding == "" || strings.EqualFold(encoding, "BASE64")):
		return b, nil
	case strings.EqualFold(encoding, "BASE64"):
		return nil, fmt.Errorf("encoding is BASE64 but content is not: %w", err)
	}
	// No or another encoding named and not base64: the content is the text itself.
	return []byte(content), nil
}
