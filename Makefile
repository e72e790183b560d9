# Plugboard: build, run, test and benchmark.
#   make run    build the SDK, the host and the example plugins; run the demo host
#   make test   every build first (one SwiftPM build at a time), then every test and check side by side
#   make check  the host tests without the suites that start SwiftPM builds: the edit-test loop
#   make bench  benchmarks, printed as ratios against baselines measured in the same run
SWIFT        ?= swift
CC           ?= cc
CONFIG       ?= debug
PLUGINS_DIR  := .build/plugins
EXAMPLES     := $(notdir $(wildcard Plugins/*))
PLUGBOARD    := .build/$(CONFIG)/plugboard
# Warnings are errors in every build here (not in the manifests: a package
# required by version may not carry unsafe flags).
STRICT       := -Xswiftc -warnings-as-errors

.PHONY: all build sdk host examples example-service examples-tested test-examples run fixtures prerequisites test test-builds test-checks check test-tsan tsan-build test-tsan-run bench bench-check bench-record bench-counter bench-counter-built instructions-check profile api-check api-check-built api-record api-record-host docs docs-built doc-references fuzz fuzz-replay layers clean help

all: build

help:
	@echo "make build    SDK, host (library + plugboard tool) and example plugins"
	@echo "make run      build, then run the demo host on the example plugins ($(PLUGINS_DIR))"
	@echo "make test     everything: builds first, then every test and check side by side (ThreadSanitizer, example tests, instruction counts, API, docs)"
	@echo "make check    quick: the host tests without the suites that start SwiftPM builds (for the edit-test loop; make test before you push)"
	@echo "make test-examples  the example plugins' own unit tests (PluginHarness)"
	@echo "make test-tsan  the registry and reload stress tests under ThreadSanitizer"
	@echo "make docs     DocC archives of the SDK and the host library in .build/docs (warnings are errors)"
	@echo "make api-check  fail if the SDK's API or ABI changed without the version bump and CHANGELOG entry it needs, or the host library's API changed without being recorded"
	@echo "make api-record make the SDK as built now the recorded baseline (after a release)"
	@echo "make api-record-host  make the host library's API as built now the recorded baseline (once the change is in CHANGELOG.md)"
	@echo "make bench    run the benchmarks (release build); the summary also goes to $(BENCH_JSON)"
	@echo "make bench-check   instruction counts (callgrind) against $(INSTRUCTION_COUNTS); fails on growth over 3%"
	@echo "make example-service  Examples/ServiceHost: a host in a swift-service-lifecycle ServiceGroup, stopped with SIGTERM (not in make test)"
	@echo "make bench-record  record the counts again after a deliberate change"
	@echo "make profile  the benchmarks under perf record (call graphs in $(PROFILE_DATA))"
	@echo "make fuzz     libFuzzer + AddressSanitizer on every parser of untrusted input, FUZZ_SECONDS (60) each"
	@echo "make clean    remove every build folder"

build: prerequisites-run sdk host examples

# What the builds and tests need beyond the toolchain (libssl-dev; for tests
# strace and valgrind): installed as root on Debian or Ubuntu, otherwise the
# one apt-get line to run is printed (.ci/prerequisites).
prerequisites:
	@sh .ci/prerequisites

prerequisites-run:
	@sh .ci/prerequisites --run-only

sdk:
	$(SWIFT) build --package-path SDK -c $(CONFIG) $(STRICT)

host:
	$(SWIFT) build -c $(CONFIG) $(STRICT)

# Each example is its own package depending on SDK/ (and the demo ones on
# Examples/DemoInterfaces), never on the host, like an outside
# author's. Their .so files are gathered into one plugins directory. They
# share one build folder, so the SDK and the demo interfaces they all
# depend on compile once, not once per example (13 s each, 3 s after).
EXAMPLES_BUILD := .build/examples
examples:
	@mkdir -p $(PLUGINS_DIR)
	@set -e; for example in $(EXAMPLES); do \
		echo "== building example plugin $$example"; \
		$(SWIFT) build --package-path Plugins/$$example --scratch-path $(EXAMPLES_BUILD) -c $(CONFIG) $(STRICT); \
		cp $(EXAMPLES_BUILD)/$(CONFIG)/lib$$example.so $(PLUGINS_DIR)/lib$$example.so.tmp; \
		mv -f $(PLUGINS_DIR)/lib$$example.so.tmp $(PLUGINS_DIR)/lib$$example.so; \
	done

# The same, each built with its tests and tested (what make test runs):
# tested here, not beside the host tests, whose scaffold test builds in
# the same folder (SwiftPM holds a folder for one process at a time).
examples-tested:
	@mkdir -p $(PLUGINS_DIR)
	@set -e; for example in $(EXAMPLES); do \
		echo "== building example plugin $$example with its tests"; \
		$(SWIFT) build --package-path Plugins/$$example --scratch-path $(EXAMPLES_BUILD) --build-tests $(STRICT); \
		cp $(EXAMPLES_BUILD)/$(CONFIG)/lib$$example.so $(PLUGINS_DIR)/lib$$example.so.tmp; \
		mv -f $(PLUGINS_DIR)/lib$$example.so.tmp $(PLUGINS_DIR)/lib$$example.so; \
		echo "== testing example plugin $$example"; \
		$(SWIFT) test --package-path Plugins/$$example --scratch-path $(EXAMPLES_BUILD) --skip-build; \
	done

run: build
	$(PLUGBOARD) demo --plugins $(PLUGINS_DIR) --config Demo/host-config.json \
		--screen Demo/checkout-screen.json --data .build/demo-data

# Plugins broken on purpose (one .dynamic product each), plugins built against
# a "future" SDK (a copy of SDK/ one ABI minor ahead, made by make-future-sdk),
# and a plugin plus a host packaged the wrong way.
fixtures:
	$(SWIFT) build --package-path Tests/Fixtures $(STRICT)
	sh Tests/FutureFixtures/make-future-sdk
	$(SWIFT) build --package-path Tests/FutureFixtures $(STRICT)
	$(SWIFT) build --package-path Tests/EmbeddedFixture $(STRICT)

# Everything, in two phases, each step timed. Builds first, one SwiftPM build
# at a time (two share locks and thrash on 2 cores): each fixture package and
# example once, the host with its tests, the ThreadSanitizer build, the
# release build of the instruction counter. Then the runs side by side: the
# host tests beside their SwiftPMBuilding suite (which starts its own
# builds, one at a time) in a process of its own, and the checks that build
# nothing (test-checks). The output of the last two is kept in $(TEST_LOGS)
# and shown when all are done.
TEST_LOGS := .build/test-logs
TIME_STEP = start=$$(date +%s); $(1); status=$$?; echo "== $(2): $$(( $$(date +%s) - start )) s"; [ $$status -eq 0 ]

test: prerequisites
	@$(call TIME_STEP,$(MAKE) --no-print-directory test-builds,builds)
	@mkdir -p $(TEST_LOGS)
	@echo "== running the host tests, the SwiftPMBuilding suite and test-checks beside them (output: $(TEST_LOGS)/)"
	@start=$$(date +%s); \
	( $(MAKE) --no-print-directory test-checks > $(TEST_LOGS)/checks.log 2>&1; echo $$? > $(TEST_LOGS)/checks.status ) & \
	( XDG_CACHE_HOME=$(CURDIR)/.build/test-cache $(TEST_BINARY) --testing-library swift-testing --filter SwiftPMBuilding \
		> $(TEST_LOGS)/swiftpm.log 2>&1; echo $$? > $(TEST_LOGS)/swiftpm.status ) & \
	XDG_CACHE_HOME=$(CURDIR)/.build/test-cache $(SWIFT) test --skip-build --skip SwiftPMBuilding; tests=$$?; \
	wait; checks=$$(cat $(TEST_LOGS)/checks.status); builds=$$(cat $(TEST_LOGS)/swiftpm.status); \
	echo "== SwiftPMBuilding (exit $$builds):"; cat $(TEST_LOGS)/swiftpm.log; \
	echo "== test-checks (exit $$checks):"; cat $(TEST_LOGS)/checks.log; \
	echo "== runs: $$(( $$(date +%s) - start )) s (host tests exit $$tests, SwiftPMBuilding exit $$builds, checks exit $$checks)"; \
	[ $$tests -eq 0 ] && [ $$builds -eq 0 ] && [ $$checks -eq 0 ]

# The host tests' binary, run directly for the SwiftPMBuilding suite: a
# process of its own starts that serial suite at once, not when one of the
# test pool's two threads is free (SwiftPM's lock on .build holds one
# `swift test` at a time).
TEST_BINARY := .build/debug/plugboardPackageTests.xctest

# Each build timed, so a run says where the builds go.
test-builds:
	@$(call TIME_STEP,$(MAKE) --no-print-directory fixtures,build: fixtures)
	@$(call TIME_STEP,$(MAKE) --no-print-directory examples-tested,build: examples with their tests and their tests run)
	@$(call TIME_STEP,$(MAKE) --no-print-directory sdk,build: SDK)
	@$(call TIME_STEP,$(MAKE) --no-print-directory tsan-build,build: ThreadSanitizer)
	@$(call TIME_STEP,$(MAKE) --no-print-directory bench-counter-built,build: release benchmark)
	@$(call TIME_STEP,$(SWIFT) build --build-tests $(STRICT),build: host and tests)

# The checks that build nothing (run beside the host tests by make test).
test-checks: api-check-built docs-built doc-references layers fuzz-replay
	$(MAKE) --no-print-directory test-tsan-run
	$(MAKE) --no-print-directory instructions-check

# The edit-test loop: the host tests without the SwiftPMBuilding suite (the
# release by URL, the scaffold, the interface package, the dev loop), then
# the API gates and doc references (seconds; a move between files reorders
# the recorded dump, and CI refused one once).
check: fixtures examples layers
	$(SWIFT) build --build-tests $(STRICT)
	XDG_CACHE_HOME=$(CURDIR)/.build/test-cache $(SWIFT) test --skip-build --skip SwiftPMBuilding
	$(MAKE) --no-print-directory api-check-built doc-references

fuzz-replay:
	.build/debug/plugboard-fuzz replay Tests/Fuzz/corpus

# Every reference from code comments and docs to a docs section resolves.
doc-references:
	sh Tests/Docs/check-references

# The host library's parts depend one way (docs/ARCHITECTURE.md).
layers:
	sh Tests/Architecture/check-layers

# Each example plugin's own unit tests, written with the SDK's PluginHarness
# the way an outside author writes theirs.
test-examples: examples-tested

# DocC for the SDK and the host library, from symbol graphs of the modules
# already built (no rebuild) and the catalogs beside their sources.
DOCS := .build/docs
# The part modules PlugboardHost re-exports: DocC documents their public
# symbols as the host library's (without the list it sees only the facade).
HOST_PARTS = $(shell sed -n 's/^@_exported import //p' Sources/PlugboardHost/Exports.swift | paste -sd, -)
docs: sdk host
	$(MAKE) --no-print-directory docs-built

docs-built:
	rm -rf $(DOCS) && mkdir -p $(DOCS)/symbols/sdk $(DOCS)/symbols/host
	swift-symbolgraph-extract -module-name Plugboard -I SDK/.build/$(CONFIG)/Modules \
		-Xcc -fmodule-map-file=$$(find SDK/.build -path '*$(CONFIG)/CPlugboard.build/module.modulemap' | head -n 1) \
		-minimum-access-level public -output-dir $(DOCS)/symbols/sdk
	swift-symbolgraph-extract -module-name PlugboardHost -I .build/$(CONFIG)/Modules \
		-Xcc -fmodule-map-file=$$(find .build -path '*$(CONFIG)/CPlugboard.build/module.modulemap' | head -n 1) \
		-Xcc -fmodule-map-file=$$(find .build -path '*$(CONFIG)/CPlugboardHost.build/module.modulemap' | head -n 1) \
		-experimental-allowed-reexported-modules=$(HOST_PARTS) \
		-minimum-access-level public -output-dir $(DOCS)/symbols/host
	docc convert SDK/Sources/Plugboard/Plugboard.docc --additional-symbol-graph-dir $(DOCS)/symbols/sdk \
		--output-path $(DOCS)/Plugboard.doccarchive --warnings-as-errors
	docc convert Sources/PlugboardHost/PlugboardHost.docc --additional-symbol-graph-dir $(DOCS)/symbols/host \
		--output-path $(DOCS)/PlugboardHost.doccarchive --warnings-as-errors
	@echo "docs: $(DOCS)/Plugboard.doccarchive and $(DOCS)/PlugboardHost.doccarchive (docc preview to browse)"

# The SDK's compatibility gate against the API and ABI recorded in SDK/api/,
# and the host library's API gate against Tests/API/PlugboardHost.api.json.
api-check: sdk host
	$(MAKE) --no-print-directory api-check-built

api-check-built:
	sh SDK/api/check
	sh Tests/API/check-host

api-record: sdk
	sh SDK/api/check record

api-record-host: host
	sh Tests/API/check-host record

# The registry and reload stress tests again, under ThreadSanitizer, from
# the package Tests/ThreadSanitized (symlinks to those test files), so the
# sanitized build is the host library and a few tests, not every target.
# Not the isolation tests: their threads contend on a Mutex (the output
# drain and a caller meeting at a crash), and the toolchain's Mutex waits and
# wakes in libswiftSynchronization (futex, not instrumented), so ThreadSanitizer
# reports accesses made under the lock as races (seen on a fresh clone).
TSAN := --package-path Tests/ThreadSanitized --sanitize=thread --scratch-path .build-tsan
test-tsan: fixtures tsan-build
	$(MAKE) --no-print-directory test-tsan-run

tsan-build:
	$(SWIFT) build --build-tests $(TSAN) $(STRICT)

test-tsan-run:
	TSAN_OPTIONS=suppressions=$(CURDIR)/Tests/ThreadSanitized/suppressions.txt XDG_CACHE_HOME=$(CURDIR)/.build-tsan/test-cache $(SWIFT) test --skip-build $(TSAN) --filter "ReloadStressTests|ExtensionRegistryTests"

# Good plugins with distinct ids: the loading benchmark loads all of them.
# (The startup benchmark makes its own: up to 200 copies of libBenchPlugin.so,
# each with a distinct id written into it.)
BENCH_PLUGINS = $(addprefix Tests/Fixtures/.build/debug/lib,$(addsuffix .so,Alpha Beta Gamma ProbeA ProbeB RouteOwnerA RouteOwnerB Undeclared)) \
	$(addprefix $(PLUGINS_DIR)/lib,$(addsuffix .so,$(EXAMPLES)))

BENCH_JSON   ?= bench/out/bench.json
PROFILE_DATA ?= bench/out/perf.data
# Benchmark groups to profile: calls, events, router, loading, admission, reload, startup, starts.
PROFILE_ONLY ?= calls,events,router

bench: fixtures examples
	$(SWIFT) build -c release $(STRICT)
	$(MAKE) --no-print-directory bench-counter-built
	$(SWIFT) build -c release --package-path Tests/Fixtures --product IsolationFaults $(STRICT)
	$(SWIFT) build -c release --package-path Tests/Fixtures --product AsyncQuoter $(STRICT)
	$(CC) -O2 -o .build/dlopen-baseline bench/dlopen_baseline.c -ldl \
		-Wl,--no-as-needed -L.build/release -l:libPlugboard.so -l:libDemoInterfaces.so -Wl,-rpath,$(CURDIR)/.build/release
	$(CC) -O2 -shared -fPIC -o .build/malloc-count.so bench/malloc_count.c
	$(CC) -O2 -o .build/spawn-measured bench/spawn_measured.c
	PLUGBOARD_BENCH_ONLY="$(PLUGBOARD_BENCH_ONLY)" $(PROFILE_WRAPPER) .build/release/plugboard-bench --baseline .build/dlopen-baseline \
		--call-plugin $(CURDIR)/$(BENCH_CALL_PLUGIN) \
		--isolation-plugin $(CURDIR)/Tests/Fixtures/.build/release/libIsolationFaults.so \
		--async-plugin $(CURDIR)/Tests/Fixtures/.build/release/libAsyncQuoter.so \
		--malloc-counter .build/malloc-count.so --json $(BENCH_JSON) \
		--reload $(CURDIR)/.build/release/plugboard $(CURDIR)/Tests/Fixtures/.build/debug/libReloadV1.so \
		$(CURDIR)/Tests/Fixtures/.build/debug/libReloadV2.so $(CURDIR)/Plugins/Greeter $(CURDIR)/SDK \
		--startup $(CURDIR)/.build/release/plugboard $(CURDIR)/Tests/Fixtures/.build/debug/libBenchPlugin.so .build/dlopen-baseline \
		--spawner .build/spawn-measured \
		--dependency-plugin $(CURDIR)/Tests/Fixtures/.build/debug/libBenchDepPlugin.so \
		--slow-start-plugin $(CURDIR)/Tests/Fixtures/.build/debug/libBenchSlowStart.so \
		--plugins $(BENCH_PLUGINS)

# A host in a swift-service-lifecycle ServiceGroup, its plugins' logs
# through swift-log: Examples/ServiceHost, built against the real packages
# (by GitHub URL), stopped with SIGTERM. Not in `make test`.
example-service: examples
	sh Examples/ServiceHost/check

# The regression gate: instructions counted by callgrind for a few paths
# (warm start of 50 plugins, one activation, a handle call, a typed publish,
# a router lookup, a publish to another type) against bench/instructions.json; fails when one grows more
# than 3%. bench-record writes the file after a deliberate change.
INSTRUCTION_COUNTS = bench/instructions.json
BENCH_CHECK_ARGS = --call-plugin $(CURDIR)/$(BENCH_CALL_PLUGIN) \
	--template $(CURDIR)/Tests/Fixtures/.build/debug/libBenchPlugin.so

bench-counter: fixtures
	$(MAKE) --no-print-directory bench-counter-built

# The release builds alone (make test has built the fixtures already).
BENCH_CALL_PLUGIN = Tests/Fixtures/.build/release/libBenchPlugin.so
bench-counter-built:
	$(SWIFT) build -c release --product plugboard-bench $(STRICT)
	$(SWIFT) build -c release --package-path Tests/Fixtures --product BenchPlugin $(STRICT)

bench-check: bench-counter
	$(MAKE) --no-print-directory instructions-check

instructions-check:
	.build/release/plugboard-bench instructions --check $(INSTRUCTION_COUNTS) $(BENCH_CHECK_ARGS)

bench-record: bench-counter
	.build/release/plugboard-bench instructions --record $(INSTRUCTION_COUNTS) $(BENCH_CHECK_ARGS)

# A perf profile of the benchmark suite (where perf is installed): call
# graphs in $(PROFILE_DATA); read them with `perf report -i $(PROFILE_DATA)`.
profile:  # bench builds what it needs
	@command -v perf > /dev/null || { echo "make profile: perf is not installed (apt-get install linux-perf)"; exit 1; }
	@mkdir -p $(dir $(PROFILE_DATA))
	$(MAKE) bench BENCH_JSON=bench/out/profiled.json PROFILE_WRAPPER="perf record -g -o $(PROFILE_DATA) --" \
		PLUGBOARD_BENCH_ONLY=$(PROFILE_ONLY)

# Every parser of untrusted input under libFuzzer with AddressSanitizer, each
# for FUZZ_SECONDS; crashing inputs land in Tests/Fuzz/corpus, which
# `make test` replays (see Tests/Fuzz/run).
# --sanitize=fuzzer tells SwiftPM that libFuzzer brings main; the -Xswiftc
# spelling instruments every Swift module with both sanitizers (SwiftPM's two
# --sanitize flags reach Swift modules as one). lld: gold merged the Swift
# objects' coverage counters wrongly, and libFuzzer saw 46 of 18,444.
FUZZ_SECONDS ?= 60
FUZZ_FLAGS   := --sanitize=fuzzer -Xswiftc -sanitize=fuzzer,address -Xcc -fsanitize=fuzzer-no-link,address \
	-Xswiftc -use-ld=lld -Xswiftc -DPLUGBOARD_FUZZER
fuzz: host fixtures
	$(SWIFT) build --scratch-path .build-fuzz --product plugboard-fuzz $(FUZZ_FLAGS) $(STRICT)
	FUZZ_SECONDS=$(FUZZ_SECONDS) sh Tests/Fuzz/run

clean:
	rm -rf .build .build-tsan .build-fuzz SDK/.build Plugins/*/.build Tests/*/.build Examples/*/.build Tests/FutureFixtures/FutureSDK
