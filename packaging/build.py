"""Build Threadline's installers.

    python packaging/build.py pyinstaller   # one-folder build: build/dist/threadline/ (macOS: Threadline.app)
    python packaging/build.py deb           # build/out/threadline_<ver>_<arch>.deb (Debian/Ubuntu)
    python packaging/build.py tarball       # build/out/threadline-<ver>-linux-<arch>.tar.gz (portable)
    python packaging/build.py appimage      # build/out/Threadline-<ver>-<arch>.AppImage (needs appimagetool)
    python packaging/build.py windows       # build/out/threadline-<ver>-windows-setup.exe (Inno Setup)
    python packaging/build.py dmg           # build/out/Threadline-<ver>-macos.dmg (needs dmgbuild)
    python packaging/build.py linux         # pyinstaller + deb + tarball

Run it with the project's environment (``.venv/bin/python``) after
``pip install -e '.[packaging]'``. Each package target reuses an existing one-folder build
when ``--reuse`` is given and builds it otherwise. Everything goes under ``build/``.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import os
import platform
import shutil
import stat
import subprocess
import sys
import tarfile
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGING = ROOT / "packaging"
RESOURCES = ROOT / "resources"
BUILD = ROOT / "build"
DIST = BUILD / "dist"
WORK = BUILD / "work"
OUT = BUILD / "out"
FROZEN = DIST / "threadline"  # the one-folder build
APP_ID = "io.github.threadline.Threadline"
DESKTOP_FILE = "threadline.desktop"
MIME_FILE = "threadline-mime.xml"
"""Threadline's file types (shared-mime-info), installed as share/mime/packages/threadline.xml."""
ICON_SIZES = (16, 22, 24, 32, 48, 64, 128, 256, 512)

# What Qt (xcb and Wayland), fonts and the bundled libraries need from a Debian/Ubuntu system.
# PyInstaller bundles most X/xcb libraries; depending on them too keeps the system ones
# installed for the cases where the system's copy is loaded (GL drivers link libX11/libxcb).
DEB_DEPENDS = [
    "libc6 (>= 2.31)",
    "libegl1", "libgl1", "libxkbcommon0", "libxkbcommon-x11-0", "libfontconfig1",
    "libfreetype6", "libdbus-1-3", "libx11-6", "libx11-xcb1", "libxcb1", "libxcb-cursor0", "libxcb-icccm4",
    "libxcb-keysyms1", "libxcb-image0", "libxcb-randr0", "libxcb-render-util0", "libxcb-shape0",
    "libxcb-util1", "libxcb-xkb1", "libxcb-xfixes0", "libxcb-shm0", "libxcb-sync1", "libxcb-render0",
    "libglib2.0-0", "libwayland-client0", "libwayland-cursor0", "libwayland-egl1",
    "fonts-dejavu-core | fonts-freefont-ttf | fonts-liberation",
]
# Voice (docs/voice.md): dictation loads the system's PortAudio, reading aloud talks to
# speech-dispatcher (with espeak-ng), playback uses PulseAudio's or ALSA's player.
DEB_RECOMMENDS = [
    "gnome-keyring | kwalletmanager | keepassxc", "xdg-desktop-portal", "ca-certificates",
    "libportaudio2", "speech-dispatcher", "espeak-ng", "pulseaudio-utils | alsa-utils",
]


# --- small helpers ---------------------------------------------------------------------------

def log(message: str) -> None:
    print(f"[build] {message}", flush=True)


def run(cmd: list[str | Path], **kwargs: object) -> None:
    log("$ " + " ".join(str(c) for c in cmd))
    subprocess.run([str(c) for c in cmd], check=True, **kwargs)  # type: ignore[call-overload]


def version() -> str:
    return str(tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"])


def deb_arch() -> str:
    if shutil.which("dpkg"):
        done = subprocess.run(["dpkg", "--print-architecture"], capture_output=True, text=True, check=True)
        return done.stdout.strip()
    return {"x86_64": "amd64", "aarch64": "arm64"}.get(platform.machine(), platform.machine())


def machine() -> str:
    names = {"amd64": "x86_64", "arm64": "arm64", "aarch64": "arm64"}
    return names.get(platform.machine().lower(), platform.machine())


def dir_size(path: Path) -> int:
    return sum(p.lstat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def human(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.1f} {unit}" if unit != "B" else f"{int(n)} B"
        n /= 1024
    return f"{n:.1f} GB"


def metainfo_xml() -> str:
    template = (RESOURCES / f"{APP_ID}.metainfo.xml.in").read_text(encoding="utf-8")
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    day = _dt.datetime.fromtimestamp(int(epoch), _dt.UTC) if epoch else _dt.datetime.now(_dt.UTC)
    return template.replace("@VERSION@", version()).replace("@DATE@", day.date().isoformat())


def icon_png(size: int) -> Path:
    return RESOURCES / "icons" / "hicolor" / f"{size}x{size}" / "apps" / "threadline.png"


def copy_icons(share: Path) -> None:
    """hicolor PNGs and the scalable SVG under ``share/icons/hicolor``."""
    for size in ICON_SIZES:
        src = icon_png(size)
        dst = share / "icons" / "hicolor" / f"{size}x{size}" / "apps" / "threadline.png"
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dst)
    scalable = share / "icons" / "hicolor" / "scalable" / "apps" / "threadline.svg"
    scalable.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(RESOURCES / "icons" / "threadline.svg", scalable)


# --- targets ---------------------------------------------------------------------------------

def build_icons() -> None:
    """.ico / .icns for the platform being built (Linux uses the committed PNGs)."""
    if not all(icon_png(size).is_file() for size in ICON_SIZES):
        run([sys.executable, PACKAGING / "icons.py", "png"])
    if sys.platform == "win32":
        run([sys.executable, PACKAGING / "icons.py", "ico", BUILD / "icons" / "threadline.ico"])
    elif sys.platform == "darwin":
        run([sys.executable, PACKAGING / "icons.py", "icns", BUILD / "icons" / "threadline.icns"])


def windows_version_info() -> None:
    """The VERSIONINFO resource of threadline.exe (Explorer's Details tab, installers)."""
    parts = [int(p) for p in version().split(".")[:3] if p.isdigit()] + [0, 0, 0, 0]
    nums = tuple(parts[:4])
    text = f"""VSVersionInfo(
  ffi=FixedFileInfo(filevers={nums}, prodvers={nums}, mask=0x3f, flags=0x0, OS=0x40004, fileType=0x1,
                    subtype=0x0, date=(0, 0)),
  kids=[
    StringFileInfo([StringTable('040904B0', [
      StringStruct('CompanyName', 'Threadline developers'),
      StringStruct('FileDescription', 'Threadline'),
      StringStruct('FileVersion', '{version()}'),
      StringStruct('InternalName', 'threadline'),
      StringStruct('LegalCopyright', 'Copyright (c) Threadline developers. MIT License.'),
      StringStruct('OriginalFilename', 'threadline.exe'),
      StringStruct('ProductName', 'Threadline'),
      StringStruct('ProductVersion', '{version()}')])]),
    VarFileInfo([VarStruct('Translation', [1033, 1200])])
  ]
)
"""
    (BUILD / "windows_version_info.txt").write_text(text, encoding="utf-8")


LOCAL_RUNTIME_MODULES = (
    "llama_cpp", "uvicorn", "fastapi", "sse_starlette", "starlette_context", "pydantic_settings",
)
"""What the spec bundles as the local runtime: llama-cpp-python and its server extra's dependencies."""


def check_local_runtime() -> bool:
    """Whether this build will carry the local runtime; says so loudly when it will not.

    Without it the packages still work (they chat with local servers, and the Models page says
    how to add a runtime), so a missing runtime warns rather than fails;
    THREADLINE_LOCAL_RUNTIME=require makes it an error (the release workflow sets it),
    THREADLINE_LOCAL_RUNTIME=0 leaves it out on purpose (docs/local-models.md, "Packaging").
    """
    import importlib.util

    wanted = os.environ.get("THREADLINE_LOCAL_RUNTIME", "1")
    if wanted == "0":
        log("local runtime: left out (THREADLINE_LOCAL_RUNTIME=0)")
        return False
    missing = [m for m in LOCAL_RUNTIME_MODULES if importlib.util.find_spec(m) is None]
    if not missing:
        log("local runtime: llama-cpp-python's server is bundled")
        return True
    message = (
        f"NO LOCAL RUNTIME: {', '.join(missing)} not installed in {sys.prefix}. The packages will not chat "
        "with downloaded models. Install it first: .ci/setup --dev builds the wheel into .ci/wheels/, then "
        "pip install '.ci/wheels/llama_cpp_python-<version>-<tag>.whl[server]' "
        "(or pip install -e '.[local]')."
    )
    if wanted == "require":
        raise SystemExit(f"[build] {message}")
    bar = "!" * 78
    print(f"{bar}\n[build] WARNING: {message}\n{bar}", flush=True)
    return False


def build_pyinstaller(reuse: bool = False) -> Path:
    marker = FROZEN / ("threadline.exe" if sys.platform == "win32" else "threadline")
    if reuse and marker.exists():
        log(f"reusing {FROZEN}")
        return FROZEN
    BUILD.mkdir(exist_ok=True)
    build_icons()
    if sys.platform == "win32":
        windows_version_info()
    shutil.rmtree(FROZEN, ignore_errors=True)
    check_local_runtime()
    started = time.monotonic()
    run([sys.executable, "-m", "PyInstaller", "--noconfirm", "--clean", "--log-level", "WARN",
         "--distpath", DIST, "--workpath", WORK, PACKAGING / "threadline.spec"])
    log(f"pyinstaller: {FROZEN} {human(dir_size(FROZEN))} in {time.monotonic() - started:.0f} s")
    return FROZEN


def build_deb(reuse: bool = False) -> Path:
    """A .deb installing under /opt/threadline with a /usr/bin/threadline wrapper."""
    frozen = build_pyinstaller(reuse)
    ver, arch = version(), deb_arch()
    root = BUILD / "deb" / f"threadline_{ver}_{arch}"
    shutil.rmtree(root, ignore_errors=True)
    opt = root / "opt" / "threadline"
    shutil.copytree(frozen, opt, symlinks=True)
    # /usr/bin/threadline: a wrapper (not a symlink) so the bootloader finds _internal/ from its own path.
    usr_bin = root / "usr" / "bin" / "threadline"
    usr_bin.parent.mkdir(parents=True)
    usr_bin.write_text('#!/bin/sh\nexec /opt/threadline/threadline "$@"\n', encoding="utf-8")
    usr_bin.chmod(0o755)
    share = root / "usr" / "share"
    (share / "applications").mkdir(parents=True)
    shutil.copy2(RESOURCES / DESKTOP_FILE, share / "applications" / DESKTOP_FILE)
    copy_mime_types(share)
    copy_icons(share)
    (share / "metainfo").mkdir(parents=True)
    (share / "metainfo" / f"{APP_ID}.metainfo.xml").write_text(metainfo_xml(), encoding="utf-8")
    doc = share / "doc" / "threadline"
    doc.mkdir(parents=True)
    (doc / "copyright").write_text(
        "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n"
        "Upstream-Name: threadline\n\nFiles: *\nCopyright: Threadline developers\nLicense: MIT\n"
        "\nFiles: opt/threadline/_internal/*\n"
        "Copyright: the respective authors (Qt, Python, bundled libraries)\n"
        "License: various; see the dist-info folders under /opt/threadline/_internal\n",
        encoding="utf-8",
    )
    # Normalise permissions: dirs 755, files 644, executables (ELF or #!) 755.
    for path in [root, *root.rglob("*")]:
        if path.is_symlink():
            continue
        if path.is_dir():
            path.chmod(0o755)
        else:
            executable = path.stat().st_mode & stat.S_IXUSR or path.suffix == ".so" or ".so." in path.name
            path.chmod(0o755 if executable else 0o644)
    installed_kb = (dir_size(root) + 1023) // 1024
    control = root / "DEBIAN" / "control"
    control.parent.mkdir()
    control.write_text(
        f"""Package: threadline
Version: {ver}
Architecture: {arch}
Maintainer: Threadline developers <threadline@users.noreply.github.com>
Installed-Size: {installed_kb}
Depends: {", ".join(DEB_DEPENDS)}
Recommends: {", ".join(DEB_RECOMMENDS)}
Section: net
Priority: optional
Homepage: https://github.com/threadline/threadline
Description: desktop conversation manager for large language models
 Threadline lets you chat with cloud models (OpenAI, Anthropic, OpenRouter, Groq)
 and local ones (Ollama, LM Studio, llama.cpp server, vLLM), keep many
 conversations open as tabs and find any old one by full-text search.
 .
 This package ships a self-contained build (Python, Qt and the libraries the app
 uses) under /opt/threadline.
""",
        encoding="utf-8",
    )
    control.chmod(0o644)
    (root / "DEBIAN").chmod(0o755)
    # No maintainer scripts: the hicolor icon cache, the desktop database and AppStream are
    # refreshed by dpkg file triggers of hicolor-icon-theme / desktop-file-utils / appstream.
    OUT.mkdir(parents=True, exist_ok=True)
    deb = OUT / f"threadline_{ver}_{arch}.deb"
    deb.unlink(missing_ok=True)
    started = time.monotonic()
    # xz on all cores when this dpkg-deb can (1.21.9+; Ubuntu 22.04's 1.21.1 cannot).
    help_text = subprocess.run(["dpkg-deb", "--help"], capture_output=True, text=True).stdout
    threads = [f"--threads-max={os.cpu_count() or 1}"] if "--threads-max" in help_text else []
    run(["dpkg-deb", "--root-owner-group", "-Zxz", *threads, "--build", root, deb])
    log(f"deb: {deb} {human(deb.stat().st_size)} in {time.monotonic() - started:.0f} s")
    return deb


def copy_mime_types(share: Path) -> None:
    """The .desktop file's own MIME types; dpkg's shared-mime-info trigger (or the tarball's
    install-desktop-entry.sh) runs update-mime-database (docs/desktop.md)."""
    (share / "mime" / "packages").mkdir(parents=True)
    shutil.copy2(RESOURCES / MIME_FILE, share / "mime" / "packages" / "threadline.xml")


def build_tarball(reuse: bool = False) -> Path:
    """A portable .tar.gz: the one-folder build, a launcher, the .desktop file and icons."""
    frozen = build_pyinstaller(reuse)
    name = f"threadline-{version()}-linux-{machine()}"
    stage = BUILD / "tarball" / name
    shutil.rmtree(stage.parent, ignore_errors=True)
    shutil.copytree(frozen, stage, symlinks=True)
    share = stage / "share"
    (share / "applications").mkdir(parents=True)
    shutil.copy2(RESOURCES / DESKTOP_FILE, share / "applications" / DESKTOP_FILE)
    copy_mime_types(share)
    copy_icons(share)
    installer = stage / "install-desktop-entry.sh"
    shutil.copy2(PACKAGING / "linux" / "install-desktop-entry.sh", installer)
    installer.chmod(0o755)
    (stage / "README.txt").write_text(
        f"Threadline {version()} — portable Linux build\n\n"
        "Run it in place:            ./threadline\n"
        "Check it works:             ./threadline --self-test\n"
        "Add it to your app menu:    ./install-desktop-entry.sh\n"
        "Take it out again:          ./install-desktop-entry.sh --remove\n\n"
        "Conversations are kept in ~/.local/share/Threadline (or --data-dir DIR); nothing is written here.\n"
        "Needs the usual desktop libraries: libegl1 libgl1 libxkbcommon0 libfontconfig1 libdbus-1-3 fonts.\n",
        encoding="utf-8",
    )
    OUT.mkdir(parents=True, exist_ok=True)
    tarball = OUT / f"{name}.tar.gz"
    started = time.monotonic()
    with tarfile.open(tarball, "w:gz", compresslevel=6) as tar:
        tar.add(stage, arcname=name, filter=_tar_owner)
    log(f"tarball: {tarball} {human(tarball.stat().st_size)} in {time.monotonic() - started:.0f} s")
    return tarball


def _tar_owner(info: tarfile.TarInfo) -> tarfile.TarInfo:
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    return info


def build_appimage(reuse: bool = False) -> Path:
    """AppDir from the one-folder build; packed by appimagetool (``$APPIMAGETOOL`` or on PATH)."""
    frozen = build_pyinstaller(reuse)
    appdir = BUILD / "appimage" / "Threadline.AppDir"
    shutil.rmtree(appdir, ignore_errors=True)
    shutil.copytree(frozen, appdir / "usr" / "lib" / "threadline", symlinks=True)
    share = appdir / "usr" / "share"
    (share / "applications").mkdir(parents=True)
    shutil.copy2(RESOURCES / DESKTOP_FILE, share / "applications" / DESKTOP_FILE)
    copy_mime_types(share)
    shutil.copy2(RESOURCES / DESKTOP_FILE, appdir / DESKTOP_FILE)
    copy_icons(share)
    shutil.copy2(icon_png(256), appdir / "threadline.png")
    (share / "metainfo").mkdir(parents=True)
    (share / "metainfo" / f"{APP_ID}.appdata.xml").write_text(metainfo_xml(), encoding="utf-8")
    apprun = appdir / "AppRun"
    apprun.write_text('#!/bin/sh\nHERE="$(dirname "$(readlink -f "$0")")"\n'
                      'exec "$HERE/usr/lib/threadline/threadline" "$@"\n', encoding="utf-8")
    apprun.chmod(0o755)
    tool = os.environ.get("APPIMAGETOOL") or shutil.which("appimagetool")
    if not tool:
        raise SystemExit(f"AppDir ready at {appdir}; install appimagetool (or set APPIMAGETOOL) to pack it")
    OUT.mkdir(parents=True, exist_ok=True)
    image = OUT / f"Threadline-{version()}-{machine()}.AppImage"
    run([tool, "--no-appstream", appdir, image], env={**os.environ, "ARCH": machine()})
    log(f"appimage: {image} {human(image.stat().st_size)}")
    return image


def build_windows(reuse: bool = False) -> Path:
    """Inno Setup installer (per-user, no admin) from the one-folder build."""
    frozen = build_pyinstaller(reuse)
    iscc = os.environ.get("ISCC") or shutil.which("iscc") or shutil.which("ISCC")
    if not iscc:
        program_files = os.environ.get("PROGRAMFILES(X86)", r"C:\Program Files (x86)")
        default = Path(program_files) / "Inno Setup 6" / "ISCC.exe"
        iscc = str(default) if default.exists() else None
    if not iscc:
        raise SystemExit("Inno Setup's ISCC.exe was not found (choco install innosetup, or set ISCC)")
    OUT.mkdir(parents=True, exist_ok=True)
    run([iscc, f"/DAppVersion={version()}", f"/DSourceDir={frozen}", f"/DOutputDir={OUT}",
         f"/DIconFile={BUILD / 'icons' / 'threadline.ico'}", PACKAGING / "windows" / "threadline.iss"])
    setup = OUT / f"threadline-{version()}-windows-setup.exe"
    log(f"windows installer: {setup} {human(setup.stat().st_size)}")
    return setup


def build_dmg(reuse: bool = False) -> Path:
    """A .dmg with Threadline.app and an Applications link (dmgbuild)."""
    build_pyinstaller(reuse)
    app = DIST / "Threadline.app"
    if not app.is_dir():
        raise SystemExit(f"{app} is missing: the .app bundle is built on macOS only")
    OUT.mkdir(parents=True, exist_ok=True)
    dmg = OUT / f"Threadline-{version()}-macos-{machine()}.dmg"
    dmg.unlink(missing_ok=True)
    run([sys.executable, "-m", "dmgbuild", "-s", PACKAGING / "macos" / "dmg_settings.py",
         "-D", f"app={app}", "-D", f"icon={BUILD / 'icons' / 'threadline.icns'}", "Threadline", dmg])
    log(f"dmg: {dmg} {human(dmg.stat().st_size)}")
    return dmg


TARGETS = {
    "pyinstaller": build_pyinstaller,
    "deb": build_deb,
    "tarball": build_tarball,
    "appimage": build_appimage,
    "windows": build_windows,
    "dmg": build_dmg,
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("targets", nargs="+", choices=[*TARGETS, "linux", "icons", "version"])
    parser.add_argument(
        "--reuse", action="store_true", help="reuse an existing one-folder build in build/dist"
    )
    args = parser.parse_args(argv)
    reuse = args.reuse
    for target in args.targets:
        if target == "version":
            print(version())
        elif target == "icons":
            build_icons()
        elif target == "linux":
            build_pyinstaller(reuse)
            build_deb(reuse=True)
            build_tarball(reuse=True)
        else:
            TARGETS[target](reuse)
        if target == "pyinstaller":
            reuse = True  # later targets on the same command line package this build
    return 0


if __name__ == "__main__":
    sys.exit(main())
