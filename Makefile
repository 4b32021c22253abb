# Basalt: the two commands of the README, and a few more.
#   make demo   install dependencies, build, run Basalt on the simulated cluster
#   make test   install dependencies, build, run every test
BUILD ?= build
# RelWithDebInfo by default; `make test BUILD=build-rel BUILD_TYPE=Release`
# runs the same suite on an optimised build (Debug works the same way).
BUILD_TYPE ?= RelWithDebInfo
ASAN_BUILD ?= build-asan
TSAN_BUILD ?= build-tsan
FUZZ_BUILD ?= build-fuzz
# make image: the Release build the OCI image is made from (deploy/image/)
IMAGE_BUILD ?= build-image
# make fuzz: seconds per libFuzzer target (CI runs 30)
FUZZ_SECONDS ?= 60
# make fuzz-long: executions per target, targets at a time, seconds at most
FUZZ_LONG_RUNS ?= 10000000
FUZZ_LONG_JOBS ?= $(JOBS)
FUZZ_LONG_SECONDS ?= 36000
FUZZ_TARGETS = fuzz_k8s_json fuzz_yaml fuzz_apisim fuzz_kubeconfig fuzz_sched_conf fuzz_quantity \
	fuzz_msg
# make soak: minutes of arrivals and chaos in each of the two soaks
SOAK_MINUTES ?= 10
JOBS ?= $(shell nproc 2>/dev/null || echo 2)

.PHONY: all deps configure build demo up test test-asan test-tsan fuzz fuzz-long soak bench image clean

all: build

deps:
	@scripts/install-deps.sh

configure: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) >/dev/null

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

demo: build
	@scripts/demo.sh $(BUILD)

# The demo cluster and the four services, kept up until Ctrl-C: kubectl
# (export KUBECONFIG=build/kubeconfig), the status page, basalt-ctl why.
up: build
	@scripts/up.sh $(BUILD)

# ctest.sh fails on a skipped test as well as a failed one. Pass CTEST_ARGS
# to choose a tier: `make test CTEST_ARGS="-L unit"` runs the fast in-process
# tests only, `-L e2e` those that start processes.
test: build
	@scripts/ctest.sh $(BUILD) -j $(JOBS) $(CTEST_ARGS)

test-asan: deps
	@cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DBASALT_SANITIZE=ON >/dev/null
	@cmake --build $(ASAN_BUILD) -j $(JOBS)
	@ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
		scripts/ctest.sh $(ASAN_BUILD) -j $(JOBS) $(CTEST_ARGS)

test-tsan: deps
	@cmake -S . -B $(TSAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DBASALT_TSAN=ON >/dev/null
	@cmake --build $(TSAN_BUILD) -j $(JOBS)
	@scripts/ctest.sh $(TSAN_BUILD) -j $(JOBS) $(CTEST_ARGS)

# The libFuzzer targets of fuzz/ (clang, ASan + UBSan), FUZZ_SECONDS each;
# fails on any crash, leak or timeout (scripts/fuzz.sh, fuzz/README.md).
fuzz: deps
	@cmake -S . -B $(FUZZ_BUILD) -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo \
		-DBASALT_FUZZ=ON >/dev/null
	@cmake --build $(FUZZ_BUILD) -j $(JOBS) --target fuzz-targets
	@scripts/fuzz.sh $(FUZZ_BUILD) $(FUZZ_SECONDS)

# Every libFuzzer target to FUZZ_LONG_RUNS executions (ten million),
# FUZZ_LONG_JOBS targets at a time at nice 19, each for at most
# FUZZ_LONG_SECONDS; one line per target as make fuzz prints it; fails on
# any crash, leak or timeout (the results are recorded in fuzz/README.md).
fuzz-long: deps
	@cmake -S . -B $(FUZZ_BUILD) -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo \
		-DBASALT_FUZZ=ON >/dev/null
	@cmake --build $(FUZZ_BUILD) -j $(JOBS) --target fuzz-targets
	@printf '%s\n' $(FUZZ_TARGETS) | xargs -P $(FUZZ_LONG_JOBS) -I{} \
		env FUZZ_RUNS=$(FUZZ_LONG_RUNS) nice -n 19 scripts/fuzz.sh $(FUZZ_BUILD) \
		$(FUZZ_LONG_SECONDS) {}

# The kill soak, then the API fault soak (the same, with the simulator
# injecting errors, latency, dropped watches and 410s): SOAK_MINUTES each of
# 200 nodes, 10,000 pods in gangs, SIGKILL/SIGSTOP on every service, checked
# from the API; reports in BUILD/soak-kill.json and BUILD/soak-faults.json.
# Fails on any duplicate bind, partial gang, overcommitted node, lost pod,
# lost PodGroup or crash (tools/soak/soak.py).
soak: build
	@python3 tools/soak/soak.py --build $(BUILD) --minutes $(SOAK_MINUTES) \
		--dir $(BUILD)/soak-kill --report $(BUILD)/soak-kill.json
	@python3 tools/soak/soak.py --build $(BUILD) --minutes $(SOAK_MINUTES) --faults \
		--dir $(BUILD)/soak-faults --report $(BUILD)/soak-faults.json

bench: build
	@scripts/bench.sh $(BUILD)

# The OCI image localhost/basalt:VERSION (and :latest) from scratch with
# buildah, Release programs built in IMAGE_BUILD, verified inside the image
# without running a container; also IMAGE_BUILD/basalt-image.oci.tar.
# Needs root. See deploy/image/README.md.
image: deps
	@JOBS=$(JOBS) deploy/image/build.sh $(IMAGE_BUILD)

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(TSAN_BUILD) $(FUZZ_BUILD) $(IMAGE_BUILD)
