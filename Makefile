# Plugboard: build, run, test and benchmark.
#   make run    build the SDK, the host and the example plugins; run the demo host
#   make test   build the fixtures and example plugins; run every test
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

.PHONY: all build sdk host examples test-examples run fixtures test test-tsan bench bench-check bench-record bench-counter profile api-check api-record api-record-host docs fuzz clean help

all: build

help:
	@echo "make build    SDK, host (library + plugboard tool) and example plugins"
	@echo "make run      build, then run the demo host on the example plugins ($(PLUGINS_DIR))"
	@echo "make test     build the test fixtures and run every test (then make test-tsan)"
	@echo "make test-examples  the example plugins' own unit tests (PluginHarness)"
	@echo "make test-tsan  the registry and reload stress tests under ThreadSanitizer"
	@echo "make docs     DocC archives of the SDK and the host library in .build/docs (warnings are errors)"
	@echo "make api-check  fail if the SDK's API or ABI changed without the version bump and CHANGELOG entry it needs, or the host library's API changed without being recorded"
	@echo "make api-record make the SDK as built now the recorded baseline (after a release)"
	@echo "make api-record-host  make the host library's API as built now the recorded baseline (once the change is in CHANGELOG.md)"
	@echo "make bench    run the benchmarks (release build); the summary also goes to $(BENCH_JSON)"
	@echo "make bench-check   instruction counts (callgrind) against $(INSTRUCTION_COUNTS); fails on growth over 3%"
	@echo "make bench-record  record the counts again after a deliberate change"
	@echo "make profile  the benchmarks under perf record (call graphs in $(PROFILE_DATA))"
	@echo "make fuzz     libFuzzer + AddressSanitizer on every parser of untrusted input, FUZZ_SECONDS (60) each"
	@echo "make clean    remove every build folder"

build: sdk host examples

sdk:
	$(SWIFT) build --package-path SDK -c $(CONFIG) $(STRICT)

host:
	$(SWIFT) build -c $(CONFIG) $(STRICT)

# Each example is its own package depending on SDK/ (and the demo ones on
# Examples/DemoInterfaces), never on the host, like an outside
# author's. Their .so files are gathered into one plugins directory.
examples:
	@mkdir -p $(PLUGINS_DIR)
	@set -e; for example in $(EXAMPLES); do \
		echo "== building example plugin $$example"; \
		$(SWIFT) build --package-path Plugins/$$example -c $(CONFIG) $(STRICT); \
		cp Plugins/$$example/.build/$(CONFIG)/lib$$example.so $(PLUGINS_DIR)/lib$$example.so.tmp; \
		mv -f $(PLUGINS_DIR)/lib$$example.so.tmp $(PLUGINS_DIR)/lib$$example.so; \
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

test: fixtures examples api-check docs
	$(SWIFT) build --build-tests $(STRICT)
	XDG_CACHE_HOME=$(CURDIR)/.build/test-cache $(SWIFT) test --skip-build
	.build/debug/plugboard-fuzz replay Tests/Fuzz/corpus
	$(MAKE) test-examples
	$(MAKE) test-tsan
	@# The instruction-count gate (about a minute with its release build), where valgrind is installed.
	@if command -v valgrind > /dev/null; then $(MAKE) bench-check; else echo "valgrind is not installed: make bench-check skipped"; fi

# Each example plugin's own unit tests, written with the SDK's PluginHarness
# the way an outside author writes theirs.
test-examples:
	@set -e; for example in $(EXAMPLES); do \
		echo "== testing example plugin $$example"; \
		$(SWIFT) build --package-path Plugins/$$example --build-tests $(STRICT); \
		$(SWIFT) test --package-path Plugins/$$example --skip-build; \
	done

# DocC for the SDK and the host library, from symbol graphs of the modules
# already built (no rebuild) and the catalogs beside their sources.
DOCS := .build/docs
docs: sdk host
	rm -rf $(DOCS) && mkdir -p $(DOCS)/symbols/sdk $(DOCS)/symbols/host
	swift-symbolgraph-extract -module-name Plugboard -I SDK/.build/$(CONFIG)/Modules \
		-Xcc -fmodule-map-file=$$(find SDK/.build -path '*$(CONFIG)/CPlugboard.build/module.modulemap' | head -n 1) \
		-minimum-access-level public -output-dir $(DOCS)/symbols/sdk
	swift-symbolgraph-extract -module-name PlugboardHost -I .build/$(CONFIG)/Modules \
		-Xcc -fmodule-map-file=$$(find .build -path '*$(CONFIG)/CPlugboard.build/module.modulemap' | head -n 1) \
		-Xcc -fmodule-map-file=$$(find .build -path '*$(CONFIG)/CPlugboardHost.build/module.modulemap' | head -n 1) \
		-minimum-access-level public -output-dir $(DOCS)/symbols/host
	docc convert SDK/Sources/Plugboard/Plugboard.docc --additional-symbol-graph-dir $(DOCS)/symbols/sdk \
		--output-path $(DOCS)/Plugboard.doccarchive --warnings-as-errors
	docc convert Sources/PlugboardHost/PlugboardHost.docc --additional-symbol-graph-dir $(DOCS)/symbols/host \
		--output-path $(DOCS)/PlugboardHost.doccarchive --warnings-as-errors
	@echo "docs: $(DOCS)/Plugboard.doccarchive and $(DOCS)/PlugboardHost.doccarchive (docc preview to browse)"

# The SDK's compatibility gate against the API and ABI recorded in SDK/api/,
# and the host library's API gate against Tests/API/PlugboardHost.api.json.
api-check: sdk host
	sh SDK/api/check
	sh Tests/API/check-host

api-record: sdk
	sh SDK/api/check record

api-record-host: host
	sh Tests/API/check-host record

# The registry and reload stress tests again, under ThreadSanitizer.
# Not the isolation tests: their threads contend on a Mutex (the output
# drain and a caller meeting at a crash), and the toolchain's Mutex waits and
# wakes in libswiftSynchronization (futex, not instrumented), so ThreadSanitizer
# reports accesses made under the lock as races (seen on a fresh clone).
test-tsan: fixtures
	$(SWIFT) build --build-tests --sanitize=thread --scratch-path .build-tsan $(STRICT)
	XDG_CACHE_HOME=$(CURDIR)/.build-tsan/test-cache $(SWIFT) test --skip-build --sanitize=thread --scratch-path .build-tsan --filter "ReloadStressTests|ExtensionRegistryTests"

# Good plugins with distinct ids: the loading benchmark loads all of them.
# (The startup benchmark makes its own: up to 200 copies of libBenchPlugin.so,
# each with a distinct id written into it.)
BENCH_PLUGINS = $(addprefix Tests/Fixtures/.build/debug/lib,$(addsuffix .so,Alpha Beta Gamma ProbeA ProbeB RouteOwnerA RouteOwnerB Undeclared)) \
	$(addprefix $(PLUGINS_DIR)/lib,$(addsuffix .so,$(EXAMPLES)))

BENCH_JSON   ?= bench/out/bench.json
PROFILE_DATA ?= bench/out/perf.data
# Benchmark groups to profile: calls, events, router, loading, admission, reload, startup.
PROFILE_ONLY ?= calls,events,router

bench: fixtures examples
	$(SWIFT) build -c release $(STRICT)
	$(SWIFT) build -c release --package-path Tests/Fixtures --product BenchPlugin $(STRICT)
	$(SWIFT) build -c release --package-path Tests/Fixtures --product IsolationFaults $(STRICT)
	$(CC) -O2 -o .build/dlopen-baseline bench/dlopen_baseline.c -ldl \
		-Wl,--no-as-needed -L.build/release -l:libPlugboard.so -l:libDemoInterfaces.so -Wl,-rpath,$(CURDIR)/.build/release
	$(CC) -O2 -shared -fPIC -o .build/malloc-count.so bench/malloc_count.c
	$(CC) -O2 -o .build/spawn-measured bench/spawn_measured.c
	PLUGBOARD_BENCH_ONLY="$(PLUGBOARD_BENCH_ONLY)" $(PROFILE_WRAPPER) .build/release/plugboard-bench --baseline .build/dlopen-baseline \
		--call-plugin $(CURDIR)/Tests/Fixtures/.build/release/libBenchPlugin.so \
		--isolation-plugin $(CURDIR)/Tests/Fixtures/.build/release/libIsolationFaults.so \
		--malloc-counter .build/malloc-count.so --json $(BENCH_JSON) \
		--reload $(CURDIR)/.build/release/plugboard $(CURDIR)/Tests/Fixtures/.build/debug/libReloadV1.so \
		$(CURDIR)/Tests/Fixtures/.build/debug/libReloadV2.so $(CURDIR)/Plugins/Greeter $(CURDIR)/SDK \
		--startup $(CURDIR)/.build/release/plugboard $(CURDIR)/Tests/Fixtures/.build/debug/libBenchPlugin.so .build/dlopen-baseline \
		--spawner .build/spawn-measured \
		--dependency-plugin $(CURDIR)/Tests/Fixtures/.build/debug/libBenchDepPlugin.so \
		--plugins $(BENCH_PLUGINS)

# The regression gate: instructions counted by callgrind for a few paths
# (warm start of 50 plugins, one activation, a handle call, a typed publish,
# a router lookup, a publish to another type) against bench/instructions.json; fails when one grows more
# than 3%. bench-record writes the file after a deliberate change.
INSTRUCTION_COUNTS = bench/instructions.json
BENCH_CHECK_ARGS = --call-plugin $(CURDIR)/Tests/Fixtures/.build/release/libBenchPlugin.so \
	--template $(CURDIR)/Tests/Fixtures/.build/debug/libBenchPlugin.so

bench-counter: fixtures
	$(SWIFT) build -c release --product plugboard-bench $(STRICT)
	$(SWIFT) build -c release --package-path Tests/Fixtures --product BenchPlugin $(STRICT)

bench-check: bench-counter
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
