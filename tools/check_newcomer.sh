#!/usr/bin/env bash
# The README's first command, as a new user runs it: a clean clone of this repository, then
# `make run` on a real X server (Xvfb) with a window manager (openbox). Passes when the
# ctxlens window maps (xdotool finds it, xwininfo says IsViewable), the demo store is then
# built behind it (the title names the demo trace), the venv holds no developer tools, and
# Ctrl+Q closes the app. Fresh user data and settings folders, so the
# first start builds the demo store. Installs xvfb, openbox and xdotool with apt when root.
#   tools/check_newcomer.sh [REPO]      (default: the repository this script is in)
set -euo pipefail
REPO=$(cd "${1:-$(dirname "$0")/..}" && pwd)
PY=${PYTHON:-python3.11}
command -v "$PY" >/dev/null || PY=python3
WAIT=${NEWCOMER_TIMEOUT:-1200}   # seconds for the whole `make run` (pip install included)
TMP=$(mktemp -d /tmp/ctxlens-newcomer.XXXXXX)
XVFB_PID="" WM_PID="" APP_PID=""
cleanup() {
  for pid in $APP_PID $WM_PID $XVFB_PID; do kill -- "-$pid" 2>/dev/null || kill "$pid" 2>/dev/null || true; done
  [ -n "${KEEP:-}" ] || rm -rf "$TMP"
}
trap cleanup EXIT
fail() { echo "newcomer: FAIL: $*" >&2; [ -f "$TMP/run.log" ] && tail -n 30 "$TMP/run.log" >&2; exit 1; }
ok() { echo "newcomer: ok: $*"; }

# The X tools this check needs (not the app: `make run` installs what the app needs).
need=""
command -v Xvfb >/dev/null || need="$need xvfb"
command -v openbox >/dev/null || need="$need openbox"
command -v xdotool >/dev/null || need="$need xdotool"
command -v xwininfo >/dev/null || need="$need x11-utils"
if [ -n "$need" ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq && apt-get install -y -qq --no-install-recommends $need >/dev/null
  else
    fail "missing X tools; install them with: sudo apt-get install -y$need"
  fi
fi

git clone -q "$REPO" "$TMP/ctxlens"
ok "clean clone of $(git -C "$REPO" rev-parse --short HEAD)"

Xvfb -displayfd 3 -screen 0 1920x1200x24 -nolisten tcp 3>"$TMP/display" 2>/dev/null &
XVFB_PID=$!
for _ in $(seq 100); do [ -s "$TMP/display" ] && break; sleep 0.1; done
[ -s "$TMP/display" ] || fail "Xvfb did not start"
export DISPLAY=":$(cat "$TMP/display")"
setsid openbox >/dev/null 2>&1 &
WM_PID=$!

# A new user: nothing in the data or config folders yet (pip's download cache is kept).
export XDG_DATA_HOME="$TMP/data" XDG_CONFIG_HOME="$TMP/config"
export PIP_CACHE_DIR="${PIP_CACHE_DIR:-$HOME/.cache/pip}"
unset QT_QPA_PLATFORM CTXLENS_DB
start=$(date +%s)
(cd "$TMP/ctxlens" && exec setsid make run PYTHON="$PY") >"$TMP/run.log" 2>&1 &
APP_PID=$!

wid=""
while [ -z "$wid" ]; do
  kill -0 "$APP_PID" 2>/dev/null || fail "make run exited before a window mapped"
  [ $(( $(date +%s) - start )) -lt "$WAIT" ] || fail "no window after ${WAIT}s"
  wid=$(xdotool search --onlyvisible --name '^ctxlens' 2>/dev/null | head -n 1 || true)
  [ -n "$wid" ] || sleep 1
done
xwininfo -id "$wid" | grep -q "Map State: IsViewable" || fail "window $wid is not viewable"
geometry=$(xwininfo -id "$wid" | awk '/Width:/{w=$2} /Height:/{h=$2} END{print w "x" h}')
ok "the window maps after $(( $(date +%s) - start ))s of make run: \"$(xdotool getwindowname "$wid")\" ${geometry}"

# the first start records the demo store in the background: the title names its trace once
# the panes have filled in
for _ in $(seq 300); do
  case "$(xdotool getwindowname "$wid" 2>/dev/null)" in *Demo*) break ;; esac
  sleep 1
done
title=$(xdotool getwindowname "$wid" 2>/dev/null || true)
case "$title" in *Demo*) ok "the demo store was built behind the open window: \"$title\"" ;;
  *) fail "the panes never filled in (title \"$title\")" ;; esac

for tool in ruff mypy pytest moto_server; do
  [ ! -e "$TMP/ctxlens/.venv/bin/$tool" ] || fail "make run installed the developer tool $tool"
done
ok "make run installed no developer tools"

xdotool windowactivate --sync "$wid" >/dev/null 2>&1 || true
# The app quits on the key press, so the window can be gone before xdotool sends the
# release (BadWindow): that is the success case; the process check below decides.
xdotool key --window "$wid" ctrl+q 2>/dev/null || true
for _ in $(seq 200); do kill -0 "$APP_PID" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$APP_PID" 2>/dev/null; then fail "Ctrl+Q did not close the app"; fi
wait "$APP_PID" || fail "make run exited with an error after Ctrl+Q"
APP_PID=""
ok "Ctrl+Q closed the app"
