# coverd — make run | test | install | uninstall | bench | fuzz
SWIFT ?= swift
PREFIX ?= $(HOME)/.local
BINDIR ?= $(PREFIX)/bin
UNITDIR ?= $(HOME)/.config/systemd/user
CONFIGDIR ?= $(HOME)/.config/coverd

.PHONY: all deps build release run test unit-test e2e-test install uninstall clean

all: build

deps:
	@./scripts/ensure-deps.sh

build: deps
	$(SWIFT) build

release: deps
	$(SWIFT) build -c release

# A working demo offline: sample covers served on 127.0.0.1, records written, daemon in the foreground.
run: release
	@./scripts/demo.sh "$$($(SWIFT) build -c release --show-bin-path)/coverd"

# Every test: unit tests, then end-to-end tests against the built binary.
test: build
	$(SWIFT) build --build-tests
	COVERD_BIN="$$($(SWIFT) build --show-bin-path)/coverd" $(SWIFT) test --skip-build

install: release
	install -d "$(BINDIR)" "$(UNITDIR)" "$(CONFIGDIR)"
	install -m 0755 "$$($(SWIFT) build -c release --show-bin-path)/coverd" "$(BINDIR)/coverd"
	@if [ -f systemd/coverd.service ]; then install -m 0644 systemd/coverd.service "$(UNITDIR)/coverd.service"; fi
	@if [ -e "$(CONFIGDIR)/coverd.toml" ]; then \
		echo "keeping the existing $(CONFIGDIR)/coverd.toml"; \
	else \
		install -m 0644 config/coverd.toml "$(CONFIGDIR)/coverd.toml"; \
	fi
	@echo "installed $(BINDIR)/coverd"

uninstall:
	rm -f "$(BINDIR)/coverd" "$(UNITDIR)/coverd.service"
	@echo "left $(CONFIGDIR) and the cache in place"

clean:
	rm -rf .build .demo
