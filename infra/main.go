// Command infra is the mcpbatch CDK app: `cdk deploy` (cdk.json runs `go run ./infra`).
//
// Context keys (cdk.json defaults, `-c key=value` overrides): stackName, jobPrefix,
// bedrockModels (comma list), assetDir (where `make build` put <fn>/bootstrap), logLevel.
package main

import (
	"fmt"
	"os"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/jsii-runtime-go"
)

func main() {
	defer jsii.Close()
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "infra:", err)
		jsii.Close()
		os.Exit(1)
	}
}

func run() error {
	app := newApp(nil)
	settings, err := SettingsFromContext(app.Node())
	if err != nil {
		return err
	}
	stack, err := NewStack(app, "Mcpbatch", &StackProps{
		StackProps: awscdk.StackProps{Env: envFromCLI()},
		Settings:   settings,
	})
	if err != nil {
		return err
	}
	CheckWithNag(stack.Stack, true)
	app.Synth(nil)
	return nil
}

// envFromCLI pins the stack to the account/region the CDK CLI resolved, when it did;
// otherwise the stack stays environment-agnostic (ARNs use AWS::AccountId/AWS::Region).
func envFromCLI() *awscdk.Environment {
	account, region := os.Getenv("CDK_DEFAULT_ACCOUNT"), os.Getenv("CDK_DEFAULT_REGION")
	if account == "" || region == "" {
		return nil
	}
	return &awscdk.Environment{Account: jsii.String(account), Region: jsii.String(region)}
}
