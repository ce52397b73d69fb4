package config

// Auth modes of the MCP endpoint, chosen at deploy time (CDK context "auth").
const (
	AuthIAM   = "iam"   // Function URL AWS_IAM: owner = the caller's principal ARN
	AuthToken = "token" // Function URL NONE: bearer API keys, stored hashed
)

// AuthModes lists the valid modes, the default first.
var AuthModes = []string{AuthIAM, AuthToken}

// Environment of the mcp function for its auth mode.
const (
	EnvAuthMode = "MCPBATCH_AUTH"
	// EnvTokenSecret names the Secrets Manager secret holding the hashed keys (token mode).
	EnvTokenSecret = "MCPBATCH_TOKEN_SECRET"
)
