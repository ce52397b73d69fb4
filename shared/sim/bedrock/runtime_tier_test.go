package bedrock_test

import (
	"context"
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	rt "github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	rttypes "github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	simbedrock "github.com/mcpbatch/mcpbatch/shared/sim/bedrock"
)

// The runtime simulator takes a service tier only where its own table says
// the model offers it, on Converse (body) and InvokeModel (header) alike.
func TestRuntimeServiceTiers(t *testing.T) {
	novaBody := `{"messages":[{"role":"user","content":[{"text":"hi"}]}],"inferenceConfig":{"maxTokens":10}}`
	tests := []struct {
		name, model, tier string
		invoke            bool
		want              string // refusal; "" accepts
	}{
		{name: "flex on Nova Pro", model: "us.amazon.nova-pro-v1:0", tier: "flex"},
		{name: "priority on Nova 2 Lite", model: "us.amazon.nova-2-lite-v1:0", tier: "priority"},
		{name: "default anywhere", model: "us.amazon.nova-lite-v1:0", tier: "default"},
		{name: "flex on Nova Lite", model: "us.amazon.nova-lite-v1:0", tier: "flex",
			want: "The model us.amazon.nova-lite-v1:0 does not support the flex service tier."},
		{name: "flex on Nova Lite via InvokeModel", model: "us.amazon.nova-lite-v1:0", tier: "flex", invoke: true,
			want: "The model us.amazon.nova-lite-v1:0 does not support the flex service tier."},
		{name: "flex on Nova Pro via InvokeModel", model: "us.amazon.nova-pro-v1:0", tier: "flex", invoke: true},
		{name: "reserved without a reservation", model: "us.amazon.nova-pro-v1:0", tier: "reserved", want: "Reservation not found."},
		{name: "unknown tier", model: "us.amazon.nova-pro-v1:0", tier: "cheapest", want: "service tier provided is invalid"},
	}
	s := &simbedrock.RuntimeSim{}
	c := newRuntime(t, s)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			if tc.invoke {
				_, err = c.InvokeModel(context.Background(), &rt.InvokeModelInput{ModelId: aws.String(tc.model), Body: []byte(novaBody),
					ContentType: aws.String("application/json"), ServiceTier: rttypes.ServiceTierType(tc.tier)})
			} else {
				_, err = c.Converse(context.Background(), &rt.ConverseInput{ModelId: aws.String(tc.model),
					ServiceTier: &rttypes.ServiceTier{Type: rttypes.ServiceTierType(tc.tier)},
					Messages: []rttypes.Message{{Role: rttypes.ConversationRoleUser,
						Content: []rttypes.ContentBlock{&rttypes.ContentBlockMemberText{Value: "hi"}}}}})
			}
			if tc.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if got := validationMessage(t, err); got != tc.want {
				t.Errorf("refusal %q, want %q", got, tc.want)
			}
		})
	}
	if st := s.Stats(); st.Tiers["flex"] != 2 || st.Tiers["priority"] != 1 || st.Tiers["default"] != 1 {
		t.Errorf("tiers served %v, want flex 2, priority 1, default 1", st.Tiers)
	}
}

// FlexThrottleRate throttles Flex calls only.
func TestRuntimeFlexThrottle(t *testing.T) {
	s := &simbedrock.RuntimeSim{FlexThrottleRate: 0.5}
	c := newRuntime(t, s)
	call := func(tier string) error {
		_, err := c.Converse(context.Background(), &rt.ConverseInput{ModelId: aws.String("us.amazon.nova-pro-v1:0"),
			ServiceTier: &rttypes.ServiceTier{Type: rttypes.ServiceTierType(tier)},
			Messages: []rttypes.Message{{Role: rttypes.ConversationRoleUser,
				Content: []rttypes.ContentBlock{&rttypes.ContentBlockMemberText{Value: "hi"}}}}})
		return err
	}
	throttled := map[string]int{}
	for range 10 {
		for _, tier := range []string{"flex", "default"} {
			var te *rttypes.ThrottlingException
			if err := call(tier); errors.As(err, &te) {
				throttled[tier]++
			} else if err != nil {
				t.Fatal(err)
			}
		}
	}
	if throttled["flex"] != 5 || throttled["default"] != 0 {
		t.Errorf("throttled %v, want flex 5 of 10 and default none", throttled)
	}
}
