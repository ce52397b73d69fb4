// Package smcontrol adapts the SageMaker control plane, Application Auto
// Scaling and CloudWatch to the service's EndpointControl port
// (describe_endpoint, shift_traffic, the async cold-start note). It lives apart
// from provider/sagemaker so functions that only invoke endpoints (the
// reconciler) do not link these SDKs.
package smcontrol

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	aas "github.com/aws/aws-sdk-go-v2/service/applicationautoscaling"
	aastypes "github.com/aws/aws-sdk-go-v2/service/applicationautoscaling/types"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
	sm "github.com/aws/aws-sdk-go-v2/service/sagemaker"
	smtypes "github.com/aws/aws-sdk-go-v2/service/sagemaker/types"

	"github.com/mcpbatch/mcpbatch/shared/provider/sagemaker"
	smsvc "github.com/mcpbatch/mcpbatch/shared/service/sagemaker"
)

// ControlAPI is the part of the SageMaker control-plane client the tools call.
type ControlAPI interface {
	DescribeEndpoint(ctx context.Context, in *sm.DescribeEndpointInput, opts ...func(*sm.Options)) (*sm.DescribeEndpointOutput, error)
	UpdateEndpointWeightsAndCapacities(ctx context.Context, in *sm.UpdateEndpointWeightsAndCapacitiesInput, opts ...func(*sm.Options)) (*sm.UpdateEndpointWeightsAndCapacitiesOutput, error)
}

// ScalingAPI is the part of the Application Auto Scaling client describe_endpoint reads.
type ScalingAPI interface {
	DescribeScalableTargets(ctx context.Context, in *aas.DescribeScalableTargetsInput, opts ...func(*aas.Options)) (*aas.DescribeScalableTargetsOutput, error)
	DescribeScalingActivities(ctx context.Context, in *aas.DescribeScalingActivitiesInput, opts ...func(*aas.Options)) (*aas.DescribeScalingActivitiesOutput, error)
}

// MetricsAPI is the CloudWatch call that reads an async endpoint's backlog.
type MetricsAPI interface {
	GetMetricData(ctx context.Context, in *cloudwatch.GetMetricDataInput, opts ...func(*cloudwatch.Options)) (*cloudwatch.GetMetricDataOutput, error)
}

// Control implements smsvc.EndpointControl over the three APIs.
type Control struct {
	SageMaker ControlAPI
	Scaling   ScalingAPI
	Metrics   MetricsAPI
	// Now is the clock of the metric window (time.Now when nil).
	Now func() time.Time
}

var _ smsvc.EndpointControl = (*Control)(nil)

// backlogWindow: SageMaker publishes the async backlog metrics every minute;
// the latest datapoint of the last few minutes is the current backlog.
const backlogWindow = 5 * time.Minute

// DescribeEndpoint reads the endpoint, each variant's scalable target and
// latest scaling activity, and, for an async endpoint, its backlog.
func (c *Control) DescribeEndpoint(ctx context.Context, name string) (smsvc.EndpointState, error) {
	out, err := c.SageMaker.DescribeEndpoint(ctx, &sm.DescribeEndpointInput{EndpointName: aws.String(name)})
	if err != nil {
		return smsvc.EndpointState{}, controlError(name, err)
	}
	st := smsvc.EndpointState{
		Name: aws.ToString(out.EndpointName), Status: string(out.EndpointStatus), FailureReason: aws.ToString(out.FailureReason),
		Async: out.AsyncInferenceConfig != nil, LastModified: aws.ToTime(out.LastModifiedTime),
	}
	ids := make([]string, 0, len(out.ProductionVariants))
	for _, v := range out.ProductionVariants {
		st.Variants = append(st.Variants, smsvc.VariantState{
			Name:          aws.ToString(v.VariantName),
			CurrentWeight: float64(aws.ToFloat32(v.CurrentWeight)), DesiredWeight: float64(aws.ToFloat32(v.DesiredWeight)),
			CurrentInstances: int(aws.ToInt32(v.CurrentInstanceCount)), DesiredInstances: int(aws.ToInt32(v.DesiredInstanceCount)),
		})
		ids = append(ids, variantResourceID(name, aws.ToString(v.VariantName)))
	}
	if c.Scaling != nil && len(ids) > 0 {
		if err := c.scaling(ctx, &st, ids); err != nil {
			return st, err
		}
	}
	if c.Metrics != nil && st.Async {
		if err := c.backlog(ctx, &st); err != nil {
			return st, err
		}
	}
	return st, nil
}

// variantResourceID is Application Auto Scaling's ResourceId of a SageMaker variant.
func variantResourceID(endpoint, variant string) string {
	return "endpoint/" + endpoint + "/variant/" + variant
}

func (c *Control) scaling(ctx context.Context, st *smsvc.EndpointState, ids []string) error {
	tg, err := c.Scaling.DescribeScalableTargets(ctx, &aas.DescribeScalableTargetsInput{
		ServiceNamespace: aastypes.ServiceNamespaceSagemaker, ResourceIds: ids,
		ScalableDimension: aastypes.ScalableDimensionSageMakerVariantDesiredInstanceCount,
	})
	if err != nil {
		return fmt.Errorf("describe scalable targets of %s: %w", st.Name, err)
	}
	limits := map[string]*smsvc.ScalingLimits{}
	for _, t := range tg.ScalableTargets {
		limits[aws.ToString(t.ResourceId)] = &smsvc.ScalingLimits{Min: int(aws.ToInt32(t.MinCapacity)), Max: int(aws.ToInt32(t.MaxCapacity))}
	}
	for i := range st.Variants {
		v := &st.Variants[i]
		id := variantResourceID(st.Name, v.Name)
		v.Scaling = limits[id]
		if v.Scaling == nil {
			continue
		}
		acts, err := c.Scaling.DescribeScalingActivities(ctx, &aas.DescribeScalingActivitiesInput{
			ServiceNamespace: aastypes.ServiceNamespaceSagemaker, ResourceId: aws.String(id),
			ScalableDimension: aastypes.ScalableDimensionSageMakerVariantDesiredInstanceCount, MaxResults: aws.Int32(1),
		})
		if err != nil {
			return fmt.Errorf("describe scaling activities of %s: %w", id, err)
		}
		// Activities come newest first.
		if len(acts.ScalingActivities) > 0 {
			a := acts.ScalingActivities[0]
			v.LastActivity = &smsvc.ScalingActivity{Description: aws.ToString(a.Description), Cause: aws.ToString(a.Cause),
				Status: string(a.StatusCode), Start: aws.ToTime(a.StartTime), End: aws.ToTime(a.EndTime)}
		}
	}
	return nil
}

func (c *Control) backlog(ctx context.Context, st *smsvc.EndpointState) error {
	now := time.Now
	if c.Now != nil {
		now = c.Now
	}
	end := now()
	q := func(id, metric, stat string) cwtypes.MetricDataQuery {
		return cwtypes.MetricDataQuery{Id: aws.String(id), MetricStat: &cwtypes.MetricStat{
			Metric: &cwtypes.Metric{Namespace: aws.String("AWS/SageMaker"), MetricName: aws.String(metric),
				Dimensions: []cwtypes.Dimension{{Name: aws.String("EndpointName"), Value: aws.String(st.Name)}}},
			Period: aws.Int32(60), Stat: aws.String(stat),
		}}
	}
	out, err := c.Metrics.GetMetricData(ctx, &cloudwatch.GetMetricDataInput{
		StartTime: aws.Time(end.Add(-backlogWindow)), EndTime: aws.Time(end), ScanBy: cwtypes.ScanByTimestampDescending,
		MetricDataQueries: []cwtypes.MetricDataQuery{q("backlog", "ApproximateBacklogSize", "Average"), q("nocapacity", "HasBacklogWithoutCapacity", "Maximum")},
	})
	if err != nil {
		return fmt.Errorf("read backlog metrics of %s: %w", st.Name, err)
	}
	for _, r := range out.MetricDataResults {
		if len(r.Values) == 0 {
			continue
		}
		// ScanBy TimestampDescending: the first value is the latest.
		v := r.Values[0]
		switch aws.ToString(r.Id) {
		case "backlog":
			st.Backlog = &v
		case "nocapacity":
			b := v >= 1
			st.HasBacklogWithoutCapacity = &b
		}
	}
	return nil
}

// UpdateWeights calls UpdateEndpointWeightsAndCapacities with the new weights only.
func (c *Control) UpdateWeights(ctx context.Context, name string, weights []smsvc.VariantWeight) error {
	in := &sm.UpdateEndpointWeightsAndCapacitiesInput{EndpointName: aws.String(name)}
	for _, w := range weights {
		in.DesiredWeightsAndCapacities = append(in.DesiredWeightsAndCapacities, smtypes.DesiredWeightAndCapacity{
			VariantName: aws.String(w.Variant), DesiredWeight: aws.Float32(float32(w.Weight)),
		})
	}
	if _, err := c.SageMaker.UpdateEndpointWeightsAndCapacities(ctx, in); err != nil {
		return controlError(name, err)
	}
	return nil
}

// controlError turns SageMaker's refusal (ValidationException: unknown
// endpoint, update in progress) into an EndpointError the tools word.
func controlError(name string, err error) error {
	var ee *smsvc.EndpointError
	if !errors.As(sagemaker.EndpointError(name, err), &ee) {
		return err
	}
	if ee.Code == "ValidationException" {
		ee.Kind = smsvc.KindValidation
	}
	var rl *smtypes.ResourceLimitExceeded
	if errors.As(err, &rl) {
		ee.Kind = smsvc.KindValidation
	}
	return ee
}
