# coverd — make run | test | install | uninstall | bench | fuzz
SWIFT ?= swift
# The build installed by `make install` (the systemd test installs the debug build it already has).
BUILD ?= release
# Release builds link the Swift runtime, Dispatch and Foundation statically: no
# symbol binding across many Swift libraries at start-up and no calls through
# the PLT for every retain and release (bench/HISTORY.md, 2026-11-23). The
# binary is larger, mostly ICU data that is never paged in. (The link prints one
# warning from Foundation's own use of mktemp; it is not coverd's code.) Build
# release only with these flags: a plain `swift build -c release` in the same
# .build rebuilds everything.
RELEASE_FLAGS = -c release --static-swift-stdlib
BUILD_FLAGS = $(if $(filter release,$(BUILD)),$(RELEASE_FLAGS),-c $(BUILD))
RELEASE_BIN = "$$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path)/coverd"
# A statically linked runtime looks for its crash backtracer from the path it
# was started by (the unit's absolute ExecStart): the directory, less a last
# `bin`, then libexec/swift/linux (the dynamic runtime looks beside
# libswiftCore.so). Without it a crash leaves one line in the journal.
BACKTRACER = $(shell $(SWIFT) -print-target-info | python3 -c 'import json, sys; print(json.load(sys.stdin)["paths"]["runtimeResourcePath"])')/../../libexec/swift/linux/swift-backtrace-static
PREFIX ?= $(HOME)/.local
BINDIR ?= $(PREFIX)/bin
UNITDIR ?= $(HOME)/.config/systemd/user
CONFIGDIR ?= $(HOME)/.config/coverd
DOCDIR ?= $(PREFIX)/share/doc/coverd
BACKTRACERDIR = $(if $(filter %/bin,$(BINDIR)),$(patsubst %/bin,%,$(BINDIR)),$(BINDIR))/libexec/swift/linux

.PHONY: all deps build release run test release-e2e systemd-test asan-test asan-e2e fuzz bench bench-check install uninstall clean
FUZZ_SECONDS ?= 300

all: build

deps:
	@./scripts/ensure-deps.sh

build: deps
	$(SWIFT) build

release: deps
	$(SWIFT) build $(RELEASE_FLAGS)

# A working demo offline: sample covers served on 127.0.0.1, records written, daemon in the foreground.
run: release
	@./scripts/demo.sh $(RELEASE_BIN)

# Every test: unit and end-to-end tests against the built binary, the
# end-to-end tests again against the static release build, then the
# service under a real systemd --user and journald (root only; CI runs as root).
# Then the unit tests again under AddressSanitizer, and each fuzzer for a minute.
test: build
	$(SWIFT) build --build-tests
	COVERD_BIN="$$($(SWIFT) build --show-bin-path)/coverd" $(SWIFT) test --skip-build
	$(MAKE) bench-check
	$(MAKE) release-e2e
	$(MAKE) systemd-test
	$(MAKE) asan-test
	$(MAKE) asan-e2e
	$(MAKE) fuzz FUZZ_SECONDS=60

# The benchmark's table (README.md, Performance; the harness in bench/README.md): coverd against curl -Z on loopback nginx.
# BENCH_ARGS="--runs 5 -n 10000"; BENCH_TMPFS=1 to leave the disk out.
bench: release
	@./scripts/ensure-deps.sh nginx iproute2
	python3 bench/bench.py --binary $(RELEASE_BIN) $(BENCH_ARGS)

# The benchmark's own correctness: a small sync through nginx, every cover checked byte for byte.
bench-check: build
	@./scripts/ensure-deps.sh nginx
	python3 bench/bench.py --check --binary "$$($(SWIFT) build --show-bin-path)/coverd"

# The end-to-end suites against the statically linked release build, the one `make install` installs.
release-e2e: release
	$(SWIFT) build --build-tests
	COVERD_BIN=$(RELEASE_BIN) $(SWIFT) test --skip-build --filter EndToEndTests

systemd-test: build
	@./scripts/test-systemd.sh

LSAN := LSAN_OPTIONS=suppressions=$(CURDIR)/scripts/lsan.supp:print_suppressions=0

asan-test: deps
	$(LSAN) $(SWIFT) test --sanitize=address --scratch-path .build-asan --skip EndToEndTests

# The end-to-end suites again, against a coverd built with AddressSanitizer (leaks fail its exit status).
asan-e2e: build
	$(SWIFT) build --sanitize=address --scratch-path .build-asan --product coverd
	$(SWIFT) build --build-tests
	$(LSAN) COVERD_BIN="$$($(SWIFT) build --sanitize=address --scratch-path .build-asan --show-bin-path)/coverd" \
		$(SWIFT) test --skip-build --filter EndToEndTests

# libFuzzer targets (Fuzz/): the record parser, the image pipeline (PNG validator and decoders), HTTP parsing; FUZZ_SECONDS each.
fuzz: deps
	@FUZZ_SECONDS=$(FUZZ_SECONDS) ./scripts/fuzz.sh

install: deps
	$(SWIFT) build $(BUILD_FLAGS) --product coverd
	install -d "$(BINDIR)" "$(UNITDIR)" "$(CONFIGDIR)" "$(DOCDIR)"
	install -m 0755 "$$($(SWIFT) build $(BUILD_FLAGS) --show-bin-path)/coverd" "$(BINDIR)/coverd"
	@# A backtracer already there (a toolchain installed under the same prefix) is left alone.
	@if [ "$(BUILD)" != release ]; then :; \
	elif [ ! -f "$(BACKTRACER)" ]; then \
		echo "warning: no $(BACKTRACER) in this toolchain: a crash will print no backtrace"; \
	elif [ -e "$(BACKTRACERDIR)/swift-backtrace" ] && ! cmp -s "$(BACKTRACER)" "$(BACKTRACERDIR)/swift-backtrace"; then \
		echo "keeping the existing $(BACKTRACERDIR)/swift-backtrace"; \
	else \
		install -D -m 0755 "$(BACKTRACER)" "$(BACKTRACERDIR)/swift-backtrace" && \
		echo "installed the crash backtracer in $(BACKTRACERDIR)"; \
	fi
	@if [ "$(BUILD)" = release ] && SWIFT_BACKTRACE=enable=yes "$(BINDIR)/coverd" --version 2>&1 | grep -q "unable to locate swift-backtrace"; then \
		echo "warning: $(BINDIR)/coverd does not find its crash backtracer"; \
	fi
	install -m 0644 systemd/coverd.service "$(UNITDIR)/coverd.service"
	install -m 0644 README.md "$(DOCDIR)/README.md"
	@if [ -e "$(CONFIGDIR)/coverd.toml" ]; then \
		echo "keeping the existing $(CONFIGDIR)/coverd.toml"; \
	else \
		install -m 0644 config/coverd.toml "$(CONFIGDIR)/coverd.toml"; \
	fi
	@echo "installed $(BINDIR)/coverd and $(UNITDIR)/coverd.service"
	@echo "next: systemctl --user daemon-reload && systemctl --user enable --now coverd"

uninstall:
	-systemctl --user disable --now coverd.service 2>/dev/null
	rm -f "$(BINDIR)/coverd" "$(UNITDIR)/coverd.service"
	@# Only the copy install made: never a toolchain's own backtracer.
	@if [ -f "$(BACKTRACER)" ] && cmp -s "$(BACKTRACER)" "$(BACKTRACERDIR)/swift-backtrace"; then \
		rm -f "$(BACKTRACERDIR)/swift-backtrace"; \
		rmdir "$(BACKTRACERDIR)" "$(dir $(BACKTRACERDIR))" 2>/dev/null || true; \
	fi
	rm -rf "$(DOCDIR)"
	-systemctl --user daemon-reload 2>/dev/null
	@echo "left $(CONFIGDIR), the records and the cache in place"

clean:
	rm -rf .build .build-asan .build-fuzz .demo fuzz-artifacts
