package sagemaker

// SageMakerSim simulates the SageMaker runtime API for make dev and tests, reached
// by the real sagemakerruntime client through BaseEndpoint:
//
//   - POST /endpoints/{name}/async-invocations (InvokeEndpointAsync): validates the
//     documented limits, answers 202 with InferenceId, OutputLocation and
//     FailureLocation, then, after AsyncDelay, writes the output (or failure) object
//     and emits the SNS notification as SNS delivers it to a Lambda subscriber.
//   - POST /endpoints/{name}/invocations (InvokeEndpoint): a real-time endpoint with
//     knobs for latency, 503s, 429s, throttling and ModelError.
//
// Every answer is simulated and says so ("simulated": true in the model output); no
// model is called.

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	mrand "math/rand/v2"
	"net/http"
	"regexp"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/mcpbatch/mcpbatch/shared/blob"

	"github.com/mcpbatch/mcpbatch/shared/sim"
)

// SageMaker error codes with the HTTP status SageMaker answers them with.
var sageMakerErrorStatus = map[string]int{
	"ModelError":                  424,
	"ValidationError":             400,
	"ThrottlingException":         400,
	"ModelNotReadyException":      429,
	"InternalFailure":             500,
	"ServiceUnavailable":          503,
	"InternalDependencyException": 530,
}

// SageMakerFaults returns the error codes real-time calls answer with, before
// the sim succeeds (e.g. "ServiceUnavailable" twice, then a result).
type SageMakerSim struct {
	// Blobs holds async inputs (InputLocation) and receives outputs and failures.
	Blobs blob.Store
	// Emit receives each SNS-to-Lambda event (JSON) of an async inference.
	Emit func(ctx context.Context, event []byte)
	// Endpoints are the endpoints that exist; nil (and no EndpointConfigs) means any name exists.
	Endpoints []string
	// EndpointConfigs declare endpoints with variants, async scale-to-zero and
	// scaling limits (sagemaker_endpoints.go); a name only in Endpoints gets one variant.
	EndpointConfigs []SageMakerEndpoint
	// Seed drives the weighted variant choice: the same seed, the same routing.
	Seed uint64
	// OutputPrefix and FailurePrefix are the endpoint's AsyncInferenceConfig S3 paths.
	OutputPrefix, FailurePrefix string
	// SuccessTopicARN and ErrorTopicARN name the topics in the notifications.
	SuccessTopicARN, ErrorTopicARN string
	Account, Region                string
	// AsyncDelay is the simulated queue + inference time of an async request.
	AsyncDelay time.Duration
	// Latency is the real-time endpoint's own latency per call.
	Latency time.Duration
	// OmitResponseBody leaves responseBody out of success notifications (as for outputs over 128 KB).
	OmitResponseBody bool
	// Model computes an output (content type, body) from an input; nil echoes the input in JSON.
	Model func(endpoint, contentType string, body []byte) (string, []byte)
	// FailAsync, when it returns a reason for an input, fails that async inference with it.
	FailAsync func(endpoint string, body []byte) string
	Log       *slog.Logger

	once   sync.Once
	mu     sync.Mutex
	faults map[string][]string
	calls  map[string]int
	http   sim.Listener
	wg     sync.WaitGroup // the listener
	async  sync.WaitGroup // accepted async inferences not yet notified
	ctx    context.Context
	cancel context.CancelFunc
	mux    *http.ServeMux
	// accepted are the async inferences answered 202 (guarded by mu), for Inventory.
	accepted []*heldAsync
	// endpoints and rng are the endpoint state and the variant draw (guarded by mu).
	endpoints map[string]*smEndpoint
	rng       *mrand.Rand
}

// Defaults of a SageMakerSim.
const (
	DefaultSageMakerOutputPrefix  = "s3://mcpbatch-local/sagemaker/output"
	DefaultSageMakerFailurePrefix = "s3://mcpbatch-local/sagemaker/failure"
	// maxResponseBodyInNotification: SageMaker includes responseBody up to 128 KB.
	maxResponseBodyInNotification = 128 * 1024
)

var endpointNamePattern = regexp.MustCompile(`^[a-zA-Z0-9](-*[a-zA-Z0-9])*$`)

func (s *SageMakerSim) init() {
	s.once.Do(func() {
		if s.Account == "" {
			s.Account = sim.DefaultAccount
		}
		if s.Region == "" {
			s.Region = sim.DefaultRegion
		}
		if s.OutputPrefix == "" {
			s.OutputPrefix = DefaultSageMakerOutputPrefix
		}
		if s.FailurePrefix == "" {
			s.FailurePrefix = DefaultSageMakerFailurePrefix
		}
		if s.SuccessTopicARN == "" {
			s.SuccessTopicARN = fmt.Sprintf("arn:aws:sns:%s:%s:mcpbatch-sagemaker-success", s.Region, s.Account)
		}
		if s.ErrorTopicARN == "" {
			s.ErrorTopicARN = fmt.Sprintf("arn:aws:sns:%s:%s:mcpbatch-sagemaker-error", s.Region, s.Account)
		}
		if s.Log == nil {
			s.Log = slog.Default()
		}
		s.Log = s.Log.With("component", "sagemaker-sim")
		s.faults, s.calls = map[string][]string{}, map[string]int{}
		s.initEndpoints()
		s.ctx, s.cancel = context.WithCancel(context.Background())
		s.mux = http.NewServeMux()
		s.mux.HandleFunc("POST /endpoints/{name}/async-invocations", s.invokeAsync)
		s.mux.HandleFunc("POST /endpoints/{name}/invocations", s.invoke)
		s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
			if s.serveControl(w, r) {
				return
			}
			sim.WriteError(w, http.StatusNotFound, "UnknownOperationException",
				fmt.Sprintf("the SageMaker runtime simulator does not implement %s %s", r.Method, r.URL.Path))
		})
		s.Log.Info("SageMaker runtime SIMULATOR started: outputs and SNS notifications are simulated, no model is called",
			"asyncDelay", s.AsyncDelay, "latency", s.Latency)
	})
}

// QueueFaults makes the next real-time calls to endpoint answer these error codes, in order.
func (s *SageMakerSim) QueueFaults(endpoint string, codes ...string) {
	s.init()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults[endpoint] = append(s.faults[endpoint], codes...)
}

// Calls is how many real-time requests endpoint has received.
func (s *SageMakerSim) Calls(endpoint string) int {
	s.init()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[endpoint]
}

// Listen serves the simulator on addr until Close and returns its base URL.
func (s *SageMakerSim) Listen(addr string) (string, error) {
	s.init()
	return s.http.Listen(addr, "sagemaker sim", s, s.Log, "SageMaker runtime simulator listening")
}

// Close stops the listener and waits for pending async inferences.
func (s *SageMakerSim) Close() error {
	s.init()
	s.cancel()
	err := s.http.Close()
	s.async.Wait()
	s.wg.Wait()
	return err
}

// Settle waits until every async inference accepted so far has been
// notified, or ctx ends (Simulator): async inferences end on their own
// timers (AsyncDelay, capacity), not in steps.
func (s *SageMakerSim) Settle(ctx context.Context) error {
	s.init()
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("sagemaker sim: settle: %w", err)
	}
	done := make(chan struct{})
	go func() { s.async.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("sagemaker sim: settle: %w", ctx.Err())
	}
}

// ServeHTTP implements the runtime routes.
func (s *SageMakerSim) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w, done := sim.BodyFirst(w, r)
	defer done()
	s.init()
	w.Header().Set("X-Amzn-Requestid", newHex(16))
	s.mux.ServeHTTP(w, r)
}

func (s *SageMakerSim) known(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.endpoint(name) != nil
}

// sageMakerError answers in the REST-JSON error shape of the runtime API.
func sageMakerError(w http.ResponseWriter, code, msg string, extra map[string]any) {
	status, ok := sageMakerErrorStatus[code]
	if !ok {
		status = 400
	}
	body := map[string]any{"__type": code, "Message": msg, "message": msg}
	for k, v := range extra {
		body[k] = v
	}
	w.Header().Set("X-Amzn-ErrorType", code)
	sim.WriteJSON(w, status, body)
}

func (s *SageMakerSim) checkEndpoint(w http.ResponseWriter, name string) bool {
	if len(name) > smMaxEndpointName || !endpointNamePattern.MatchString(name) {
		sageMakerError(w, "ValidationError", fmt.Sprintf("1 validation error detected: Value '%s' at 'endpointName' failed to satisfy constraint", name), nil)
		return false
	}
	if !s.known(name) {
		sageMakerError(w, "ValidationError", fmt.Sprintf("Endpoint %s of account %s not found.", name, s.Account), nil)
		return false
	}
	return true
}

func intHeader(r *http.Request, name string) (int, bool, error) {
	v := r.Header.Get(name)
	if v == "" {
		return 0, false, nil
	}
	n, err := strconv.Atoi(v)
	return n, true, err
}

// invokeAsync is InvokeEndpointAsync.
func (s *SageMakerSim) invokeAsync(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	if !s.checkEndpoint(w, name) {
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, smMaxInlineBody+1)) // the rest: sim.BodyFirst
	if err != nil {
		sageMakerError(w, "ValidationError", "reading body: "+err.Error(), nil)
		return
	}
	id := r.Header.Get("X-Amzn-SageMaker-Inference-Id")
	input := r.Header.Get("X-Amzn-SageMaker-InputLocation")
	ct := r.Header.Get("X-Amzn-SageMaker-Content-Type")
	accept := r.Header.Get("X-Amzn-SageMaker-Accept")
	switch {
	case len(body) > smMaxInlineBody:
		sageMakerError(w, "ValidationError", fmt.Sprintf("Body is over %d bytes; use InputLocation", smMaxInlineBody), nil)
		return
	case len(body) == 0 && input == "":
		sageMakerError(w, "ValidationError", "one of Body or InputLocation is required", nil)
		return
	case len(body) > 0 && input != "":
		sageMakerError(w, "ValidationError", "Body and InputLocation are mutually exclusive", nil)
		return
	case len(input) > smMaxInputLocation:
		sageMakerError(w, "ValidationError", "InputLocation is over 1024 characters", nil)
		return
	case len(id) > 64:
		sageMakerError(w, "ValidationError", "InferenceId must be 1..64 characters", nil)
		return
	}
	if ttl, ok, err := intHeader(r, "X-Amzn-SageMaker-RequestTTLSeconds"); err != nil || ok && (ttl < smMinRequestTTL || ttl > smMaxRequestTTL) {
		sageMakerError(w, "ValidationError", "RequestTTLSeconds must be 60..21600", nil)
		return
	}
	if t, ok, err := intHeader(r, "X-Amzn-SageMaker-InvocationTimeoutSeconds"); err != nil || ok && (t < smMinInvocationTimeout || t > smMaxInvocationTimeout) {
		sageMakerError(w, "ValidationError", "InvocationTimeoutSeconds must be 1..3600", nil)
		return
	}
	if id == "" {
		id = newHex(16)
	}
	obj := newHex(16)
	out := blob.Join(s.OutputPrefix, obj+".out")
	fail := blob.Join(s.FailurePrefix, obj+"-error.out")
	w.Header().Set("X-Amzn-SageMaker-OutputLocation", out)
	w.Header().Set("X-Amzn-SageMaker-FailureLocation", fail)
	sim.WriteJSON(w, http.StatusAccepted, map[string]string{"InferenceId": id})

	req := asyncReq{endpoint: name, id: id, input: input, body: body, contentType: ct, accept: accept, out: out, fail: fail, received: time.Now().UTC()}
	req.held = s.track(id, name)
	ready, done := s.awaitCapacity(name)
	s.async.Add(1)
	go func() {
		defer s.async.Done()
		// A scaled-to-zero endpoint holds the request until its first instance serves.
		select {
		case <-ready:
		case <-s.ctx.Done():
		}
		done()
		if s.AsyncDelay > 0 {
			t := time.NewTimer(s.AsyncDelay)
			select {
			case <-s.ctx.Done():
				t.Stop()
			case <-t.C:
			}
		}
		s.runAsync(context.WithoutCancel(s.ctx), req)
	}()
}

type asyncReq struct {
	endpoint, id, input, contentType, accept, out, fail string
	body                                                []byte
	received                                            time.Time
	held                                                *heldAsync
}

// runAsync "runs" one async inference: writes its output or failure object and notifies.
func (s *SageMakerSim) runAsync(ctx context.Context, q asyncReq) {
	body := q.body
	if q.input != "" {
		rc, err := s.Blobs.Open(ctx, q.input, 0)
		if err == nil {
			body, err = io.ReadAll(rc)
			rc.Close()
		}
		if err != nil {
			s.notifyFailure(ctx, q, fmt.Sprintf("ClientError: Failed to download input data from %s: %v", q.input, err))
			return
		}
	}
	if s.FailAsync != nil {
		if reason := s.FailAsync(q.endpoint, body); reason != "" {
			s.notifyFailure(ctx, q, reason)
			return
		}
	}
	ct, out := s.model(q.endpoint, q.contentType, body)
	if _, err := s.Blobs.Put(ctx, q.out, bytes.NewReader(out), ct); err != nil {
		s.Log.Error("sagemaker sim: write output", "uri", q.out, "err", err)
		s.notifyFailure(ctx, q, "InternalFailure: simulated output write failed: "+err.Error())
		return
	}
	n := s.notification(q, "Completed")
	n["responseParameters"] = map[string]string{"contentType": ct, "outputLocation": q.out}
	if !s.OmitResponseBody && len(out) <= maxResponseBodyInNotification {
		n["responseBody"] = map[string]string{"content": base64.StdEncoding.EncodeToString(out), "message": "", "encoding": "BASE64"}
	}
	s.settle(q.held, smAsyncCompleted)
	s.emit(ctx, s.SuccessTopicARN, n)
}

func (s *SageMakerSim) notifyFailure(ctx context.Context, q asyncReq, reason string) {
	_, _ = s.Blobs.Put(ctx, q.fail, bytes.NewReader([]byte(reason)), "text/plain")
	s.settle(q.held, smAsyncFailed)
	n := s.notification(q, "Failed")
	n["failureReason"] = reason
	s.emit(ctx, s.ErrorTopicARN, n)
}

func (s *SageMakerSim) notification(q asyncReq, status string) map[string]any {
	req := map[string]string{"accept": q.accept, "contentType": q.contentType, "endpointName": q.endpoint, "inputLocation": q.input}
	return map[string]any{
		"awsRegion": s.Region, "eventTime": time.Now().UTC().Format("2006-01-02T15:04:05.000Z"),
		"receivedTime": q.received.Format("2006-01-02T15:04:05.000Z"), "invocationStatus": status,
		"requestParameters": req, "inferenceId": q.id, "eventVersion": "1.0", "eventSource": "aws:sagemaker",
		"eventName": "InferenceResult",
	}
}

// EmitTestNotification sends the TestNotification SageMaker publishes when an
// endpoint's async config is created or updated.
func (s *SageMakerSim) EmitTestNotification(ctx context.Context) {
	s.init()
	s.emit(ctx, s.SuccessTopicARN, map[string]any{"eventName": "TestNotification"})
}

// emit wraps a notification in the SNS-to-Lambda envelope.
func (s *SageMakerSim) emit(ctx context.Context, topic string, msg map[string]any) {
	if s.Emit == nil {
		return
	}
	ev, err := SNSEvent(topic, msg)
	if err != nil {
		s.Log.Error("sagemaker sim: encode notification", "err", err)
		return
	}
	s.Emit(ctx, ev)
}

// SNSEvent wraps a message in the event SNS hands a Lambda subscriber. The
// signature is marked as simulated: nothing here was signed by SNS.
func SNSEvent(topicARN string, message any) ([]byte, error) {
	msg, err := json.Marshal(message)
	if err != nil {
		return nil, err
	}
	return json.Marshal(events.SNSEvent{Records: []events.SNSEventRecord{{
		EventVersion: "1.0", EventSource: "aws:sns", EventSubscriptionArn: topicARN + ":" + newUUIDString(),
		SNS: events.SNSEntity{
			Type: "Notification", MessageID: newUUIDString(), TopicArn: topicARN, Message: string(msg),
			Timestamp: time.Now().UTC().Truncate(time.Millisecond), SignatureVersion: "1", Signature: "SIMULATED",
			SigningCertURL: "https://sns.simulated.invalid/cert.pem", UnsubscribeURL: "https://sns.simulated.invalid/unsubscribe",
			MessageAttributes: map[string]any{},
		},
	}}})
}

func (s *SageMakerSim) model(endpoint, contentType string, body []byte) (string, []byte) {
	if s.Model != nil {
		return s.Model(endpoint, contentType, body)
	}
	var echo any = string(body)
	if json.Valid(body) {
		echo = json.RawMessage(body)
	}
	out, _ := json.Marshal(map[string]any{"simulated": true, "endpoint": endpoint, "input_bytes": len(body), "echo": echo})
	return "application/json", out
}

// invoke is the real-time InvokeEndpoint.
func (s *SageMakerSim) invoke(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	// Read the whole request first, as SageMaker does, so a fault never leaves it half read.
	body, err := io.ReadAll(io.LimitReader(r.Body, smMaxRealtimeBody+1))
	if err != nil {
		sageMakerError(w, "ValidationError", "reading body: "+err.Error(), nil)
		return
	}
	if !s.checkEndpoint(w, name) {
		return
	}
	s.mu.Lock()
	s.calls[name]++
	var fault string
	if q := s.faults[name]; len(q) > 0 {
		fault, s.faults[name] = q[0], q[1:]
	}
	s.mu.Unlock()
	if s.Latency > 0 {
		t := time.NewTimer(s.Latency)
		select {
		case <-r.Context().Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
	switch fault {
	case "":
	case "ModelError":
		sageMakerError(w, fault, "Received server error (500) from primary with message \"simulated model failure\"", map[string]any{
			"OriginalStatusCode": 500, "OriginalMessage": "simulated model failure",
			"LogStreamArn": fmt.Sprintf("arn:aws:logs:%s:%s:log-group:/aws/sagemaker/Endpoints/%s", s.Region, s.Account, name),
		})
		return
	default:
		sageMakerError(w, fault, "simulated "+fault, nil)
		return
	}
	if len(body) > smMaxRealtimeBody {
		sageMakerError(w, "ValidationError", "Request payload is over 6 MB", nil)
		return
	}
	target := r.Header.Get("X-Amzn-SageMaker-Target-Variant")
	variant, ok := s.pickVariant(name, target)
	if !ok {
		if target != "" {
			sageMakerError(w, "ValidationError", fmt.Sprintf("Endpoint %s does not have a production variant named %s.", name, target), nil)
		} else {
			sageMakerError(w, "ValidationError", fmt.Sprintf("Endpoint %s has no production variant with a weight above 0.", name), nil)
		}
		return
	}
	ct, out := s.model(name, r.Header.Get("Content-Type"), body)
	w.Header().Set("Content-Type", ct)
	w.Header().Set("X-Amzn-Invoked-Production-Variant", variant)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(out)
}

func newHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func newUUIDString() string {
	h := newHex(16)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

var _ sim.Simulator = (*SageMakerSim)(nil)
