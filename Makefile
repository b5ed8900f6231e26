# Corral. The two set-up commands: `make demo` and `make test` (see README.md).
SHELL := bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEMO_DIR ?= $(CURDIR)/.dev-cluster
PYTEST_ARGS ?=

.PHONY: help venv lock control-plane node storage image lint unit slow e2e realnode upgrade conformance-tests browser test fuzz faults mutate compat demo demo-down clean

help:  ## list the targets
	@grep -E '^[a-z-]+:.*##' $(MAKEFILE_LIST) | sed 's/:.*## /\t/' | expand -t 16

$(STAMP): pyproject.toml constraints.txt
	@command -v $(PYTHON) >/dev/null || { echo "error: $(PYTHON) not found (Python 3.11+ is required)" >&2; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[dev]'
	@# The development harness (hack/corral_dev, not in the wheel) is importable from this venv.
	echo "$(CURDIR)/hack" > "$$($(BIN)/python -c 'import sysconfig; print(sysconfig.get_path("purelib"))')/corral-dev.pth"
	@touch $@

venv: $(STAMP)  ## create .venv with Corral and its test and lint tools

lock:  ## re-pin constraints.txt from a fresh resolve of pyproject.toml's dependencies
	rm -rf $(VENV)-lock && $(PYTHON) -m venv $(VENV)-lock
	$(VENV)-lock/bin/python -m pip install --quiet '.[dev]'
	{ sed -n '/^#/p' constraints.txt; $(VENV)-lock/bin/python -m pip freeze --exclude corral; } > constraints.txt.new
	mv constraints.txt.new constraints.txt && rm -rf $(VENV)-lock

control-plane:  ## build (or reuse, cached by version under ~/.cache/corral/bin) the control-plane binaries
	@hack/build-control-plane >/dev/null

node:  ## build (or reuse, cached by version) the real node's kubelet, kube-proxy, containerd, pause
	@hack/build-node >/dev/null

storage:  ## build (or reuse, cached by version) the CSI external-provisioner and driver of the volume tests
	@hack/build-storage >/dev/null

image: venv  ## build the image from the Dockerfile with buildah: dist/corral-<version>.tar (localhost/corral:<version>)
	@hack/image --out dist

lint: venv  ## ruff, ruff format, mypy --strict, import-linter contracts, vulture (dead code)
	$(BIN)/ruff check operator tests bench hack examples
	$(BIN)/ruff format --check operator tests bench hack examples
	$(BIN)/mypy
	$(BIN)/lint-imports
	@# Every tier collected as one run, as `make test` does (two test modules of one basename
	@# outside packages collide only then).
	@$(BIN)/python -m pytest tests --collect-only -q >/dev/null || { \
	  $(BIN)/python -m pytest tests --collect-only -q 2>&1 | tail -20; exit 1; }
	@# Dead code in the product, the harness and bench (tests/ read as users of it, not checked).
	@dead=$$($(BIN)/vulture operator/corral hack/corral_dev hack/demo.py hack/mutate.py bench tests hack/vulture_whitelist.py --min-confidence 60 | grep -v '^tests/' || true); \
	  if [[ -n $$dead ]]; then echo "$$dead"; echo 'vulture: delete it, or list it in hack/vulture_whitelist.py with the reason' >&2; exit 1; fi

# The tiers (markers given by tests/conftest.py); `make test` runs every one of them but `upgrade` and `browser`.
unit: venv  ## the fast unit tier (no control plane, no slow or conformance tests; ~2 min on 2 cores)
	$(BIN)/python -m pytest tests/unit -m "not slow and not conformance and not browser" $(PYTEST_ARGS)

slow: venv  ## the slow unit tests: wheel builds, the out-of-tree example, fuzz and property runs
	$(BIN)/python -m pytest tests/unit -m slow $(PYTEST_ARGS)

e2e: venv control-plane node storage  ## end-to-end tests against the real local control plane (no real node, no conformance)
	$(BIN)/python -m pytest tests/e2e -m "not realnode and not conformance" $(PYTEST_ARGS)

realnode: venv control-plane node storage  ## the real-node tier: the image, one real node, the operator as real pods (root)
	$(BIN)/python -m pytest tests/e2e -m "realnode and not upgrade" $(PYTEST_ARGS)

upgrade: venv control-plane node storage  ## the previous release's install upgraded (kustomize, Helm) and uninstalled on the real node (~10 min; not in `make test`)
	$(BIN)/python -m pytest tests/e2e -m upgrade $(PYTEST_ARGS)

conformance-tests: venv control-plane  ## the conformance tier: Corral against the pinned kube-scheduler (recorded decisions, live binary)
	$(BIN)/python -m pytest tests -m conformance $(PYTEST_ARGS)

browser: venv  ## the --html pages rendered in headless Chromium (installs Debian's chromium when missing)
	$(BIN)/python -m pytest tests -m browser $(PYTEST_ARGS)

# Every tier but `upgrade` and `browser` (a fresh CI machine would install Chromium for it: `make browser`).
test: venv control-plane node storage lint  ## everything: lint, types, import contracts and every tier but `upgrade` and `browser`
	$(BIN)/python -m pytest tests -m "not upgrade and not browser" $(PYTEST_ARGS)

FUZZ_SCALE ?= 20
# The harness watches every case itself (a hang is a failed case), so no pytest timeout.
fuzz: venv  ## the fuzz tests of every entry point with FUZZ_SCALE times the cases of `make test`
	CORRAL_FUZZ_SCALE=$(FUZZ_SCALE) $(BIN)/python -m pytest tests/unit/fuzz --timeout=0 $(PYTEST_ARGS)

# The fault tests of docs/reliability.md, the long ones too (`make test` runs the fast ones);
# FAULT_RUNS=3 runs them three times in a row and stops at the first red run.
FAULT_RUNS ?= 1
faults: venv control-plane  ## every fault e2e test (tests/e2e/faults), the long ones too; FAULT_RUNS=3 for three in a row
	for run in $$(seq $(FAULT_RUNS)); do \
		echo "== fault run $$run of $(FAULT_RUNS)"; \
		$(BIN)/python -m pytest tests/e2e/faults --faults -p no:cacheprovider $(PYTEST_ARGS) || exit 1; \
	done

# Issue 40's mutation table (hack/corral_dev/mutations.py): each row's break applied to a scratch
# copy, its e2e ids run on one local control plane; exit 1 when a break survives. Results:
# docs/plugins/mutations.md. MUTATE_ARGS="--only ID ... --baseline --cluster-dir DIR".
MUTATE_ARGS ?=
mutate: venv control-plane  ## break each e2e failure mode of Coscheduling and CapacityScheduling and check its tests fail (~1 h; not in `make test`)
	$(BIN)/python hack/mutate.py $(MUTATE_ARGS)

# Without KUBE_VERSION: every minor of COMPAT_VERSIONS (versions.env) back to 1.33, one at a time;
# `make compat KUBE_VERSION=v1.x.y ETCD_VERSION=v3.x.y` for one release.
KUBE_VERSION ?=
ETCD_VERSION ?= v3.6.16
compat: venv  ## the engine's e2e smoke against older control planes (not in `make test`; docs/compatibility.md)
	hack/compat $(if $(KUBE_VERSION),$(KUBE_VERSION) $(ETCD_VERSION),)

demo: venv control-plane  ## local cluster + CRD + operator (local engines) + tenant profile scheduling a workload
	$(BIN)/python hack/demo.py --dir $(DEMO_DIR)

demo-down:  ## stop the demo cluster, the operator and its engines
	hack/dev-cluster down --dir $(DEMO_DIR)

clean:  ## remove the venv and caches (the control-plane binary cache under ~/.cache is kept)
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache

# --- benchmarks and conformance (bench/, docs/benchmarks.md) ---------------------------------
.PHONY: bench conformance bench-protocol bench-full bench-smoke bench-operator bench-docs \
	bench-scaling soak
BENCH_STAMP := $(VENV)/.bench-installed
BENCH_ARGS ?=
CONFORMANCE_ARGS ?=
CONFORMANCE_KINDS ?= pod-level,extended,profiles,preemption,extenders,large
# The protocol (docs/benchmarks/method.md): PROTOCOL_OUT names the results directory (default
# bench/results/protocol-<time>); PROTOCOL_ARGS passes more options, e.g. "--resume". It exits
# 1 when a workload misses a goal (bench/goals.py). The scaling curve: SCALING_OUT (default
# bench/results/scaling), SCALING_PAIRS, SCALING_ARGS (e.g. "--workload SchedulingBasic").
PROTOCOL_OUT ?=
PROTOCOL_ARGS ?=
FULL_PAIRS ?= 3
PROTOCOL_RUNS ?=
SCALING_OUT ?= bench/results/scaling
SCALING_PAIRS ?= 3
SCALING_ARGS ?=
_protocol_out = $(if $(PROTOCOL_OUT),--out $(PROTOCOL_OUT),)

$(BENCH_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[dev,bench]'
	@touch $@

bench: venv control-plane $(BENCH_STAMP)  ## Corral vs upstream kube-scheduler, default sizes, twice (bench/results/)
	$(BIN)/python -m bench run --repeat 2 $(BENCH_ARGS)

conformance: venv control-plane  ## Corral's decisions vs upstream kube-scheduler's: 6 scenario kinds x 6 seeds, 2,172 pods
	$(BIN)/python -m bench.conformance --kinds $(CONFORMANCE_KINDS) --seeds 1-6 --candidates corral $(CONFORMANCE_ARGS)

bench-protocol: venv control-plane $(BENCH_STAMP)  ## the protocol, default sizes: 6 ABBA pairs per workload, lean and pinned; exit 1 on a missed goal (~31 min, idle machine)
	$(BIN)/python -m bench protocol --pairs 6 $(_protocol_out) $(PROTOCOL_ARGS)

bench-full: venv control-plane $(BENCH_STAMP)  ## the protocol at scheduler_perf's sizes (5,000 nodes): FULL_PAIRS=3 pairs (~55 min; --resume to 6)
	$(BIN)/python -m bench protocol --full --pairs $(FULL_PAIRS) $(_protocol_out) $(PROTOCOL_ARGS)

bench-smoke: venv control-plane $(BENCH_STAMP)  ## the protocol's plumbing: 1 pair of SchedulingBasic on 4 nodes, 20 pods (~1 min; no figures)
	$(BIN)/python -m bench protocol --pairs 1 --workload SchedulingBasic --nodes 4 --init-pods 4 --pods 20 $(_protocol_out) $(PROTOCOL_ARGS)

OPERATOR_PROFILES ?= 1000
bench-operator: venv control-plane  ## the operator at fleet size: 1,000 SchedulerProfiles on their own cluster (OPERATOR_PROFILES)
	$(BIN)/python -m bench.operator_apply --profiles $(OPERATOR_PROFILES) $(BENCH_ARGS)

bench-scaling: venv control-plane $(BENCH_STAMP)  ## the scaling curve: the protocol at 100-5,000 nodes, one plot per workload (hours; SCALING_ARGS="--workload W")
	$(BIN)/python -m bench scaling --pairs $(SCALING_PAIRS) --out $(SCALING_OUT) $(SCALING_ARGS)

bench-docs: venv $(BENCH_STAMP)  ## keep PROTOCOL_RUNS="dir ..." (protocol or scaling runs) in docs/benchmarks/, then regenerate docs/benchmarks.md, history.md and the plots
	$(BIN)/python -m bench docs $(PROTOCOL_RUNS)

SOAK_MINUTES ?= 60
SOAK_ARGS ?=
soak: venv control-plane $(BENCH_STAMP)  ## an hour of churn (~50 pods/s, claims, volumes): RSS, threads, files, caches each minute; flat or exit 1
	$(BIN)/python -m bench.soak --minutes $(SOAK_MINUTES) $(SOAK_ARGS)
