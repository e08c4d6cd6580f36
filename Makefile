# ctxlens developer entry points. Every target creates or updates .venv itself.
PYTHON ?= python3.11
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-dev
RUN_STAMP := $(VENV)/.installed-run
PKG_STAMP := $(VENV)/.installed-package
BENCH_STAMP := $(VENV)/.installed-bench
export QT_QPA_PLATFORM ?= offscreen

.PHONY: run syslibs check-newcomer test lint typecheck layers pytest test-headless bench stress bundle deb package test-package clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

## the app alone (make run): the runtime dependencies, no developer tools
$(RUN_STAMP): pyproject.toml | syslibs $(BIN)/python
	$(BIN)/python -m pip install -q -e .
	touch $(RUN_STAMP)

## make test's tools on top (ruff, mypy, pytest, moto, …)
$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e '.[dev]'
	touch $(STAMP)

## make bench's baselines on top (inspect_ai for the Inspect import ratio); kept out of
## make test, which never needs them
$(BENCH_STAMP): pyproject.toml $(STAMP)
	$(BIN)/python -m pip install -q -e '.[dev,bench-inspect]'
	touch $(BENCH_STAMP)

## the system libraries Qt's xcb platform loads: installed with apt when root, otherwise
## stop at once with the exact command (app/qt_libs.py; the system Python, no venv yet)
syslibs:
	@$(PYTHON) -m app.qt_libs --install

## make run: install and launch the app on its embedded default store (the demo store)
run: syslibs $(RUN_STAMP)
	QT_QPA_PLATFORM= $(BIN)/ctxlens

## make check-newcomer: a clean clone, `make run` under Xvfb with a window manager, the
## window must map (tools/check_newcomer.sh; installs xvfb, openbox, xdotool when root)
check-newcomer:
	bash tools/check_newcomer.sh

## make test: lint, type check, layering check and the whole pytest suite (offscreen Qt)
test: lint typecheck layers pytest

lint: $(STAMP)
	$(BIN)/ruff check core ui app tests bench tools packaging
	$(BIN)/ruff format --check core ui app tests bench tools packaging

typecheck: $(STAMP)
	$(BIN)/mypy core app ui

layers: $(STAMP)
	$(BIN)/lint-imports

pytest: $(STAMP)
	$(BIN)/python -m pytest -n 2 -q

## core's tests in a venv without PySide6 (proves core never needs Qt)
test-headless:
	$(PYTHON) tools/headless_check.py

bench: $(BENCH_STAMP)
	$(BIN)/python -m bench

stress: $(STAMP)
	$(BIN)/python -m bench.stress

## make package: the PyInstaller bundle dist/ctxlens/ and dist/ctxlens_<version>_<arch>.deb
$(PKG_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e '.[package]'
	touch $(PKG_STAMP)

bundle: $(PKG_STAMP)
	$(BIN)/pyinstaller --noconfirm --clean --log-level WARN \
		--distpath dist --workpath build/pyinstaller packaging/ctxlens.spec

deb: bundle
	PYTHON=$(BIN)/python packaging/build_deb.sh dist/ctxlens dist

package: deb

## make test-package: build both, self-test the bundle and the .deb (extracted) offscreen
test-package:
	PYTHON="$(PYTHON)" packaging/test_package.sh

clean:
	rm -rf $(VENV) .venv-headless build dist .pytest_cache .mypy_cache .ruff_cache
