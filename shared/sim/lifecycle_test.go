package sim_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"

	"github.com/mcpbatch/mcpbatch/shared/sim"
	simanthropic "github.com/mcpbatch/mcpbatch/shared/sim/anthropic"
	simbedrock "github.com/mcpbatch/mcpbatch/shared/sim/bedrock"
	simvectors "github.com/mcpbatch/mcpbatch/shared/sim/s3vectors"
	simsagemaker "github.com/mcpbatch/mcpbatch/shared/sim/sagemaker"
)

// TestSimulatorLifecycle: every simulator settles the same way: at once
// with nothing pending, and never past an ended context.
func TestSimulatorLifecycle(t *testing.T) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	cases := map[string]sim.Simulator{
		"bedrock":    func() *simbedrock.BedrockSim { s := simbedrock.NewBedrockSim(nil, nil); s.Log = quiet; return s }(),
		"anthropic":  &simanthropic.AnthropicSim{Log: quiet},
		"sagemaker":  &simsagemaker.SageMakerSim{Log: quiet},
		"runtime":    &simbedrock.RuntimeSim{Log: quiet},
		"quotas":     &simbedrock.QuotasSim{Account: simbedrock.NewAccount(), Log: quiet},
		"price list": &simbedrock.PriceListSim{Log: quiet},
		"s3vectors":  &simvectors.S3VectorsSim{Log: quiet},
	}
	for name, s := range cases {
		t.Run(name, func(t *testing.T) {
			if err := s.Settle(t.Context()); err != nil {
				t.Errorf("settle with nothing pending: %v", err)
			}
			ctx, cancel := context.WithCancel(t.Context())
			cancel()
			if err := s.Settle(ctx); !errors.Is(err, context.Canceled) {
				t.Errorf("settle after the context ended = %v, want context.Canceled", err)
			}
			if err := s.Close(); err != nil {
				t.Errorf("close: %v", err)
			}
		})
	}
}
