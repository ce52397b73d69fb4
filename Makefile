# mcpbatch — one module, several Lambdas, one CDK stack.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c

FUNCTIONS := mcp bedrock-events ingest sagemaker-events nightly-report ondemand reconciler validate providers
BOOTSTRAPS := $(FUNCTIONS:%=bin/%/bootstrap)
GO_SOURCES := $(shell find functions shared -name '*.go' -not -name '*_test.go') go.mod go.sum
TOOLS := $(CURDIR)/.tools
CDK := $(CURDIR)/.cdk/node_modules/.bin/cdk
export PATH := $(TOOLS)/bin:$(PATH)

.PHONY: all build dev demo test test-binaries bench lint synth deploy clean tools fuzz cost

all: build

## build: bin/<fn>/bootstrap for every Lambda (linux/arm64, static, stripped),
## plus the pipelines file beside the functions that read it.
PIPELINES_FILE := infra/pipelines/pipelines.json
build: $(BOOTSTRAPS) bin/mcp/pipelines.json bin/nightly-report/pipelines.json

bin/%/pipelines.json: $(PIPELINES_FILE)
	@mkdir -p $(@D)
	cp $< $@

# One go build for all the functions (a grouped target): the packages they share,
# the AWS and Anthropic SDKs among them, compile once rather than once per function.
$(BOOTSTRAPS) &: $(GO_SOURCES)
	$(call build-functions,arm64,bin)

# build-functions builds every function for linux/$(1) as Lambda runs it (static,
# stripped) into $(2)/<fn>/bootstrap: `go build -o dir/` of several mains names
# each after its folder, so they are built aside and moved into place.
define build-functions
	@rm -rf $(2)/.build && mkdir -p $(2)/.build
	GOOS=linux GOARCH=$(1) CGO_ENABLED=0 go build -tags lambda.norpc -trimpath -ldflags "-s -w" -o $(2)/.build/ $(FUNCTIONS:%=./functions/%)
	@for fn in $(FUNCTIONS); do mkdir -p $(2)/$$fn && mv $(2)/.build/$$fn $(2)/$$fn/bootstrap; done; rmdir $(2)/.build
endef

## dev: the whole suite in one process on http://$(ADDR)/mcp with the simulators
## (make dev ADDR=127.0.0.1:9000 for another port). The binary is built first
## and then run in make's place (exec), so a signal to make reaches the server.
ADDR ?= 127.0.0.1:8787
DEV_DIR ?= .mcpbatch
DEV_BIN := bin/dev/local
dev:
	@echo "make dev: building $(DEV_BIN) (the first build compiles the AWS SDK: a few minutes; progress every 15 s)"
	@go build -o $(DEV_BIN) ./infra/local & pid=$$!; s=0; \
	while kill -0 $$pid 2>/dev/null; do sleep 1; s=$$((s+1)); \
	  if [ $$((s % 15)) -eq 0 ]; then echo "make dev: still compiling ($${s} s)"; fi; done; wait $$pid
	@echo "make dev: starting on http://$(ADDR)/mcp"
	@exec ./$(DEV_BIN) -addr $(ADDR) -dir $(DEV_DIR)

## demo: one report pipeline end to end, offline, over the generated sample corpus; prints the report's path.
demo:
	go run ./infra/demo

## cost: the suite's own AWS bill for a 1,000,000-record text batch job and a
## 1,000,000-document embedding job next to their inference cost; each job runs
## with COST_RECORDS records in the local suite (offline) and is extrapolated linearly.
COST_RECORDS ?= 2000
cost:
	go run ./infra/cost -n $(COST_RECORDS)

## tools: fetch what the tests need and this machine lacks (says what it does).
tools:
	bash .ci/tools.sh

## test: every test layer: unit, contract (moto_server), handlers, simulators, MCP
## over a real client, built artifacts under the Lambda RIE, CDK assertions,
## cdk-nag, cfn-lint, a CLI synth, and every fuzz target for FUZZ_TIME (make fuzz).
test: tools lint test-binaries
	MCPBATCH_E2E=1 MCPBATCH_TOOLS=$(TOOLS) MCPBATCH_BOOTSTRAPS=$(TEST_BIN) MCPBATCH_DEV_BIN=$(TEST_BIN)/dev \
	  go test -count=1 -timeout 40m ./...
	$(MAKE) fuzz
	$(MAKE) synth
	cfn-lint cdk.out/*.template.json

## test-binaries: what the tests run, built once per run before go test and shared by every
## test package: the bootstraps for linux/arm64 (make build's, weighed by TestBootstrapSize)
## and for the host's arch (run under RIE) in $(TEST_BIN)/linux_<arch>/<fn>/bootstrap, and the
## make dev binary in $(TEST_BIN)/dev. Without MCPBATCH_BOOTSTRAPS / MCPBATCH_DEV_BIN the
## tests build their own (plain go test).
TEST_BIN := $(CURDIR)/bin/test
HOST_ARCH := $(shell go env GOARCH)
test-binaries: build
	@mkdir -p $(TEST_BIN) && ln -sfn .. $(TEST_BIN)/linux_arm64
ifneq ($(HOST_ARCH),arm64)
	$(call build-functions,$(HOST_ARCH),$(TEST_BIN)/linux_$(HOST_ARCH))
endif
	go build -o $(TEST_BIN)/dev ./infra/local

## fuzz: every fuzz target (func Fuzz* in a _test.go) for FUZZ_TIME each, one at a time
## (-fuzz takes one target of one package). Seeds live in <pkg>/testdata/fuzz/<FuzzName>/
## and run as plain tests in `go test` too; a failure the fuzzer finds is written there.
FUZZ_TIME ?= 10s
fuzz:
	@grep -rHo --include='*_test.go' '^func Fuzz[A-Za-z0-9_]*' functions infra shared | sort -u | \
	while IFS=: read -r file fn; do \
	  fn="$${fn#func }"; pkg="./$$(dirname "$$file")"; \
	  echo "fuzz: $$pkg $$fn for $(FUZZ_TIME)"; \
	  for try in 1 2; do \
	    out="$$(go test -run '^$$' -fuzz "^$$fn\$$" -fuzztime $(FUZZ_TIME) "$$pkg" 2>&1)" && { echo "$$out" | tail -3; break; }; \
	    echo "$$out"; \
	    if [ $$try = 1 ] && echo "$$out" | grep -q 'context deadline exceeded' && ! echo "$$out" | grep -q 'Failing input written'; then \
	      echo "fuzz: $$fn: the fuzzer's own deadline flake (no failing input found); once more"; continue; fi; \
	    exit 1; \
	  done; \
	done

## bench: the benchmarks (figures to stdout), the ingest peak-RSS probe and a
## 1 GiB file submit end to end in make dev terms (about 2 minutes).
bench: tools
	MCPBATCH_TOOLS=$(TOOLS) go test -run '^$$' -bench . -benchmem -benchtime=2x ./shared/... ./functions/
	go run ./shared/ingest/internal/memprobe -mb 100
	go run ./shared/ingest/internal/memprobe -mb 400
	go run ./shared/app/local/internal/uploadprobe -mib 1024

## lint: gofmt, go vet, cfn-lint on the synthesized template (when present).
lint:
	@unformatted="$$(gofmt -l functions infra shared)"; if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi
	go vet ./...
	@if ls cdk.out/*.template.json >/dev/null 2>&1; then cfn-lint cdk.out/*.template.json; fi

## synth: the CloudFormation template into cdk.out/ (no AWS account needed).
synth: build .cdk/node_modules/.bin/cdk
	$(CDK) synth --quiet $(CDK_ARGS)

## deploy: build and deploy the stack to the account in your AWS credentials.
deploy: build .cdk/node_modules/.bin/cdk
	$(CDK) deploy --require-approval broadening $(CDK_ARGS)

.cdk/node_modules/.bin/cdk:
	@echo "installing the AWS CDK CLI under .cdk/ (npm)"
	npm install --prefix .cdk --no-audit --no-fund --loglevel=error aws-cdk@2

clean:
	rm -rf bin cdk.out .mcpbatch
