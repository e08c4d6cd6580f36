"""The system libraries Qt's xcb platform loads: checked before Qt starts, installed by make.

PySide6's wheels ship Qt itself but not the X11/xcb, GL, font and D-Bus libraries its xcb
platform plugin links against. When one is missing, Qt prints "Could not load the Qt
platform plugin xcb" and aborts (exit 134) without naming a package. ``missing()``
loads each library with ``ctypes`` first (a few milliseconds), so ``ctxlens`` can say which
Debian packages to install and exit 2 instead, and ``make run`` can install them before
the long pip install (``python3 -m app.qt_libs --install``). Only the standard library
is used: make runs this with the system Python, before the venv exists.

The table is the direct ``DT_NEEDED`` set of ``libqxcb.so``, ``libQt6XcbQpa``,
``libQt6Gui`` and ``libQt6DBus`` that the wheel does not ship (tests/app/test_qt_libs.py
checks it against the installed plugin and against ``packaging/deb/sonames.txt``).
"""

from __future__ import annotations

import ctypes
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence

#: soname -> Debian package (alternatives with "|": the newer name first).
XCB_LIBS: dict[str, str] = {
    "libEGL.so.1": "libegl1",
    "libGL.so.1": "libgl1",
    "libX11.so.6": "libx11-6",
    "libX11-xcb.so.1": "libx11-xcb1",
    "libdbus-1.so.3": "libdbus-1-3",
    "libfontconfig.so.1": "libfontconfig1",
    "libfreetype.so.6": "libfreetype6",
    "libglib-2.0.so.0": "libglib2.0-0t64|libglib2.0-0",
    "libgthread-2.0.so.0": "libglib2.0-0t64|libglib2.0-0",
    "libz.so.1": "zlib1g",
    "libxcb.so.1": "libxcb1",
    "libxcb-cursor.so.0": "libxcb-cursor0",
    "libxcb-icccm.so.4": "libxcb-icccm4",
    "libxcb-image.so.0": "libxcb-image0",
    "libxcb-keysyms.so.1": "libxcb-keysyms1",
    "libxcb-randr.so.0": "libxcb-randr0",
    "libxcb-render.so.0": "libxcb-render0",
    "libxcb-render-util.so.0": "libxcb-render-util0",
    "libxcb-shape.so.0": "libxcb-shape0",
    "libxcb-shm.so.0": "libxcb-shm0",
    "libxcb-sync.so.1": "libxcb-sync1",
    "libxcb-util.so.1": "libxcb-util1",
    "libxcb-xfixes.so.0": "libxcb-xfixes0",
    "libxcb-xkb.so.1": "libxcb-xkb1",
    "libxkbcommon.so.0": "libxkbcommon0",
    "libxkbcommon-x11.so.0": "libxkbcommon-x11-0",
}

_NOT_FOUND = re.compile(r"(lib[\w.+-]+\.so[\w.]*): cannot open shared object file")


def needs_xcb(env: Mapping[str, str]) -> bool:
    """True when Qt will pick the xcb platform: Linux, xcb or no platform set, an X display."""
    if not sys.platform.startswith("linux"):
        return False
    platform = env.get("QT_QPA_PLATFORM", "").split(":")[0].strip()
    return platform == "xcb" or (platform == "" and bool(env.get("DISPLAY")))


def missing(libs: Sequence[str] | None = None) -> list[str]:
    """The sonames that cannot be loaded (a library whose own dependency is missing names
    that dependency, so the list points at what to install)."""
    out: list[str] = []
    for soname in XCB_LIBS if libs is None else libs:
        try:
            ctypes.CDLL(soname)
        except OSError as exc:
            found = _NOT_FOUND.search(str(exc))
            name = found.group(1) if found else soname
            if name not in out:
                out.append(name)
    return out


def packages(sonames: Sequence[str], known: set[str] | None = None) -> list[str]:
    """Debian package names for ``sonames``, picking the alternative apt knows."""
    out: list[str] = []
    for soname in sonames:
        choices = XCB_LIBS.get(soname, soname).split("|")
        pick = next((c for c in choices if known is None or c in known), choices[-1])
        if pick not in out:
            out.append(pick)
    return out


def apt_known(names: Sequence[str]) -> set[str]:
    """Which of ``names`` apt has heard of (one ``apt-cache show``; empty without apt)."""
    if shutil.which("apt-cache") is None or not names:
        return set()
    cmd = ["apt-cache", "show", "--no-all-versions", *names]
    result = subprocess.run(cmd, capture_output=True, text=True, check=False)
    return set(re.findall(r"^Package: (\S+)", result.stdout, re.MULTILINE))


def install_command(sonames: Sequence[str]) -> str:
    """The exact command that installs what is missing."""
    alternatives = {c for s in sonames for c in XCB_LIBS.get(s, s).split("|")}
    sudo = "" if os.geteuid() == 0 else "sudo "
    names = packages(sonames, apt_known(sorted(alternatives)))
    return sudo + "apt-get install -y " + " ".join(names)


def message(sonames: Sequence[str]) -> str:
    """One line for a user: what is missing and how to install it."""
    return (
        f"Qt's X11 (xcb) platform needs system libraries that are missing "
        f"({', '.join(sonames)}); install them with: {install_command(sonames)}"
        " (or run with QT_QPA_PLATFORM=offscreen for no window)"
    )


def guard(env: Mapping[str, str] | None = None) -> str | None:
    """The message to print instead of starting Qt, or ``None`` when Qt can start."""
    env = os.environ if env is None else env
    if not needs_xcb(env):
        return None
    lacking = missing()
    return message(lacking) if lacking else None


def _apt_install(sonames: Sequence[str]) -> bool:
    alternatives = sorted({c for s in sonames for c in XCB_LIBS.get(s, s).split("|")})
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    subprocess.run(["apt-get", "update", "-qq"], env=env, check=False)
    names = packages(sonames, apt_known(alternatives))
    print(f"ctxlens: installing Qt's system libraries: {' '.join(names)}", file=sys.stderr)
    cmd = ["apt-get", "install", "-y", "-qq", "--no-install-recommends", *names]
    return subprocess.run(cmd, env=env, check=False).returncode == 0


def main(argv: Sequence[str] | None = None) -> int:
    """``python3 -m app.qt_libs [--install]``: exit 0 when every library loads."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not sys.platform.startswith("linux"):
        return 0
    lacking = missing()
    if lacking and "--install" in args and os.geteuid() == 0 and shutil.which("apt-get"):
        _apt_install(lacking)
        lacking = missing()
    if lacking:
        print(f"ctxlens: {message(lacking)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
