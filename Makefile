# coverd — make run | test | install | uninstall | man | completions | bench | fuzz
SWIFT ?= swift
# The build installed by `make install` (the systemd test installs the debug build it already has).
BUILD ?= release
# Release builds link the Swift runtime, Dispatch and Foundation statically: no
# symbol binding across many Swift libraries at start-up and no calls through
# the PLT for every retain and release (bench/HISTORY.md, "Earlier on 2026-11-23"). The
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
MANDIR ?= $(PREFIX)/share/man
# Where bash-completion, zsh and fish look. zsh reads ~/.local/share/zsh/site-functions only
# once it is on the user's fpath (the system's /usr/local/share/zsh/site-functions always is).
BASHCOMPLETIONDIR ?= $(PREFIX)/share/bash-completion/completions
ZSHCOMPLETIONDIR ?= $(PREFIX)/share/zsh/site-functions
FISHCOMPLETIONDIR ?= $(PREFIX)/share/fish/vendor_completions.d
# `make man` and `make completions` leave the page and the scripts here for install and man-test.
DOCS_OUT = .build/docs
# generate-manual's plugin writes <plugin work directory>/<target>/<name>.1.
MAN_PLUGIN_PAGE = .build/plugins/GenerateManual/outputs/coverd/coverd.1
# The page's date is the last commit's, so the same source makes the same page.
MAN_DATE := $(shell git -C "$(CURDIR)" log -1 --format=%cs 2>/dev/null || date -u +%F)
BACKTRACERDIR = $(if $(filter %/bin,$(BINDIR)),$(patsubst %/bin,%,$(BINDIR)),$(BINDIR))/libexec/swift/linux

.PHONY: all deps build release run test release-e2e systemd-test asan-test asan-e2e fuzz bench bench-check man completions man-test install uninstall clean
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

# Every test: the MusicBrainz stand-in's self-test (a few seconds; the end-to-end tests rely on the
# stand-in), the unit tests, then the end-to-end tests against the built binary (apart: while
# they wait for a daemon they hold the cooperative threads the unit tests' tasks run on), the man page and completions
# against it, the end-to-end tests again against the static release build, then the
# service under a real systemd --user and journald (root only; CI runs as root).
# Then the unit tests again under AddressSanitizer, and each fuzzer for a minute.
test: build
	python3 Tests/Support/test_musicbrainz_server.py
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build --skip EndToEndTests
	COVERD_BIN="$$($(SWIFT) build --show-bin-path)/coverd" $(SWIFT) test --skip-build --filter EndToEndTests
	$(MAKE) man-test
	$(MAKE) bench-check
	$(MAKE) release-e2e
	$(MAKE) systemd-test
	$(MAKE) asan-test
	$(MAKE) asan-e2e
	$(MAKE) fuzz FUZZ_SECONDS=60

# The benchmark's table (README.md, Performance; the harness in bench/README.md): coverd against curl -Z on loopback nginx.
# BENCH_ARGS="--runs 5 -n 10000"; BENCH_TMPFS=1 to leave the disk out.
bench: release
	@./scripts/ensure-deps.sh nginx iproute2 pngcheck
	python3 bench/bench.py --binary $(RELEASE_BIN) $(BENCH_ARGS)

# The benchmark's own correctness: each kind of run small (syncs over HTTP and HTTPS, curl -Z, pngcheck,
# the JPEG pipelines), every output checked.
bench-check: build
	@./scripts/ensure-deps.sh nginx pngcheck
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

# The man page, by swift-argument-parser's generate-manual command plugin: it builds the package
# (debug: the build `make build` made, so nothing is rebuilt; its release would be a second, non-static
# release build) and renders `coverd --experimental-dump-help` as mdoc. No sandbox or write flag is
# needed: it writes only under .build/plugins, and SwiftPM sandboxes plugins on macOS only.
man: build
	rm -f $(MAN_PLUGIN_PAGE)
	$(SWIFT) package plugin generate-manual --configuration debug --date $(MAN_DATE) </dev/null
	install -D -m 0644 $(MAN_PLUGIN_PAGE) $(DOCS_OUT)/coverd.1
	@echo "the man page is $(DOCS_OUT)/coverd.1 (man -l $(DOCS_OUT)/coverd.1)"

# bash, zsh and fish completion scripts, from the same build's ArgumentParser definitions.
completions: build
	mkdir -p $(DOCS_OUT)
	bin="$$($(SWIFT) build --show-bin-path)/coverd" && \
	"$$bin" --generate-completion-script bash >$(DOCS_OUT)/coverd.bash && \
	"$$bin" --generate-completion-script zsh >$(DOCS_OUT)/_coverd && \
	"$$bin" --generate-completion-script fish >$(DOCS_OUT)/coverd.fish
	@echo "the completion scripts are $(DOCS_OUT)/coverd.bash, $(DOCS_OUT)/_coverd and $(DOCS_OUT)/coverd.fish"

# The page names every subcommand the binary has, and each script is the binary's and mentions them.
man-test: man completions
	python3 Tests/Docs/docs_test.py --bin "$$($(SWIFT) build --show-bin-path)/coverd" --man $(DOCS_OUT)/coverd.1 \
		--bash $(DOCS_OUT)/coverd.bash --zsh $(DOCS_OUT)/_coverd --fish $(DOCS_OUT)/coverd.fish

install: deps man completions
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
	install -D -m 0644 $(DOCS_OUT)/coverd.1 "$(MANDIR)/man1/coverd.1"
	install -D -m 0644 $(DOCS_OUT)/coverd.bash "$(BASHCOMPLETIONDIR)/coverd"
	install -D -m 0644 $(DOCS_OUT)/_coverd "$(ZSHCOMPLETIONDIR)/_coverd"
	install -D -m 0644 $(DOCS_OUT)/coverd.fish "$(FISHCOMPLETIONDIR)/coverd.fish"
	@if [ -e "$(CONFIGDIR)/coverd.toml" ]; then \
		echo "keeping the existing $(CONFIGDIR)/coverd.toml"; \
	else \
		install -m 0644 config/coverd.toml "$(CONFIGDIR)/coverd.toml"; \
	fi
	@echo "installed $(BINDIR)/coverd, $(UNITDIR)/coverd.service, $(MANDIR)/man1/coverd.1 and completions for bash, zsh and fish"
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
	rm -f "$(MANDIR)/man1/coverd.1" "$(BASHCOMPLETIONDIR)/coverd" "$(ZSHCOMPLETIONDIR)/_coverd" "$(FISHCOMPLETIONDIR)/coverd.fish"
	-systemctl --user daemon-reload 2>/dev/null
	@echo "left $(CONFIGDIR), the records and the cache in place"

clean:
	rm -rf .build .build-asan .build-fuzz .demo fuzz-artifacts
