#!/usr/bin/env bash
# Build the .deb and the portable tarball, install the .deb, smoke-test the installed app,
# check the menu entry and icons, remove it cleanly, and print sizes and times.
#
#   sudo packaging/test_deb.sh            # full run: PyInstaller build + .deb + tarball (~5-8 min on 2 cores)
#   sudo REUSE=1 packaging/test_deb.sh    # package the existing build/dist/threadline again
#
# Run on demand on a Debian/Ubuntu machine (root or sudo; it installs and removes the
# package `threadline`), and by the release workflow on its Ubuntu runner before upload.
# Needs the project venv with the packaging extra: pip install -e '.[packaging]', and the local
# runtime (llama-cpp-python[server]; .ci/setup --dev builds its wheel into .ci/wheels/):
# the packages are checked to chat with a downloaded model with nothing else installed.
# ALLOW_NO_RUNTIME=1 accepts a build without it (the chat check is then skipped, loudly).
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
PY="${PYTHON:-$ROOT/.venv/bin/python}"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive

fail() { echo "test_deb: FAIL: $*" >&2; exit 1; }
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f s", b - a }'; }
mb() { awk -v n="$1" 'BEGIN { printf "%.1f MB", n / 1048576 }'; }

VERSION="$("$PY" packaging/build.py version)"
ARCH="$(dpkg --print-architecture)"
DEB="build/out/threadline_${VERSION}_${ARCH}.deb"
TARBALL="build/out/threadline-${VERSION}-linux-$(uname -m | sed 's/aarch64/arm64/').tar.gz"
TMP="$(mktemp -d /tmp/threadline-test-deb.XXXXXX)"
chmod 755 "$TMP"
trap 'rm -rf "$TMP"' EXIT

# --- build -----------------------------------------------------------------------------------
t0=$(now)
if [ "${REUSE:-0}" = 1 ] && [ -x build/dist/threadline/threadline ]; then
    echo "== reusing build/dist/threadline"
else
    echo "== PyInstaller one-folder build"
    "$PY" packaging/build.py pyinstaller
fi
t1=$(now)
echo "== .deb"
"$PY" packaging/build.py deb --reuse
t2=$(now)
echo "== tarball"
"$PY" packaging/build.py tarball --reuse
t3=$(now)
[ -f "$DEB" ] || fail "$DEB was not built"
[ -f "$TARBALL" ] || fail "$TARBALL was not built"
dpkg-deb --info "$DEB" | sed -n '/Package:/,$p'
dpkg-deb --contents "$DEB" > "$TMP/contents.txt"
grep -q ' ./opt/threadline/threadline$' "$TMP/contents.txt" || fail "no /opt/threadline/threadline in the .deb"
grep -q ' ./usr/bin/threadline$' "$TMP/contents.txt" || fail "no /usr/bin/threadline in the .deb"
runtime_in_deb=0
grep -q '/_internal/llama_cpp/lib/libllama\.so' "$TMP/contents.txt" && runtime_in_deb=1
if [ "$runtime_in_deb" = 1 ]; then
    echo "local runtime: in the .deb ($(grep -c '/_internal/llama_cpp/lib/' "$TMP/contents.txt") paths under llama_cpp/lib)"
elif [ "${ALLOW_NO_RUNTIME:-0}" = 1 ]; then
    echo "WARNING: the .deb has NO local runtime (ALLOW_NO_RUNTIME=1): the local-model chat is not checked"
else
    fail "the .deb has no local runtime (llama_cpp/lib/libllama.so); install llama-cpp-python[server] in $PY's environment, or ALLOW_NO_RUNTIME=1"
fi

# --- install ---------------------------------------------------------------------------------
if dpkg -s threadline >/dev/null 2>&1; then
    echo "== removing a previously installed threadline"
    $SUDO apt-get remove --purge -y threadline >/dev/null
fi
echo "== install"
t4=$(now)
# apt resolves the Depends from the archive; dpkg -i is the fallback on a machine without one.
if ! $SUDO apt-get install -y --no-install-recommends "./$DEB"; then
    $SUDO dpkg -i "$DEB" || fail "the .deb did not install"
fi
t5=$(now)
dpkg -s threadline | grep -q '^Status: install ok installed' || fail "dpkg does not list threadline as installed"
touch "$TMP/after-install"
sleep 1

# --- the installed app -----------------------------------------------------------------------
[ "$(command -v threadline)" = /usr/bin/threadline ] || fail "threadline is not /usr/bin/threadline on PATH"
got="$(env -i PATH=/usr/bin:/bin HOME="$TMP/home" threadline --version 2>"$TMP/version.err")"
if [ -z "$got" ]; then
    got="$(cat "$TMP/version.err")"
    echo "WARNING: threadline --version printed to stderr, not stdout"
fi
echo "installed: $got"
[ "$got" = "threadline $VERSION" ] || fail "--version printed '$got', expected 'threadline $VERSION'"

mkdir -p "$TMP/home"
echo "== self-test (HOME=$TMP/home, default data dir)"
t6=$(now)
env -i PATH=/usr/bin:/bin HOME="$TMP/home" LANG=C.UTF-8 threadline --self-test || fail "self-test failed"
t7=$(now)
[ -f "$TMP/home/.local/share/Threadline/threadline.db" ] || fail "self-test did not use ~/.local/share/Threadline"
echo "files the self-test wrote:"; (cd "$TMP/home" && find . -type f | sed 's/^/  /')
outside="$(find "$TMP/home" -type f ! -path "$TMP/home/.local/share/Threadline/*" | head -5)"
[ -z "$outside" ] || fail "self-test wrote outside the data dir: $outside"
written="$(find /opt/threadline -newer "$TMP/after-install" | head -5)"
[ -z "$written" ] || fail "the app wrote into /opt/threadline: $written"

if command -v runuser >/dev/null && id nobody >/dev/null 2>&1; then
    echo "== self-test as an unprivileged user (--data-dir)"
    mkdir -p "$TMP/nobody" && chown nobody "$TMP/nobody"
    runuser -u nobody -- env -i PATH=/usr/bin:/bin HOME="$TMP/nobody" LANG=C.UTF-8 \
        threadline --data-dir "$TMP/nobody/data" --self-test || fail "self-test as nobody failed"
fi

echo "== the installed app streams through the openai and anthropic SDKs (local replay server)"
t_ask0=$(now)
HOME="$TMP/home" "$PY" packaging/smoke_ask.py /usr/bin/threadline "$TMP/ask-data" || fail "threadline ask failed"
t_ask1=$(now)

# A downloaded model, chatted with through the installed package alone: a fresh HOME and data
# folder, PATH without any other runtime, a tiny random-weight llama made with the venv's gguf.
local_chat() {  # PROGRAM LABEL DATA_DIR
    local program="$1" label="$2" data="$3" home="$3-home"
    mkdir -p "$home"
    "$PY" -c 'import sys; sys.path.insert(0, "."); from tests.support.tiny_gguf import make_tiny_gguf; make_tiny_gguf(__import__("pathlib").Path(sys.argv[1]))' "$TMP/tiny.gguf" \
        || fail "could not make the tiny GGUF with $PY"
    local clean=(env -i PATH=/usr/bin:/bin HOME="$home" LANG=C.UTF-8)
    ! "${clean[@]}" sh -c 'command -v llama-server' >/dev/null || fail "a llama-server is on PATH: not a clean check"
    "${clean[@]}" "$program" --data-dir "$data" models import "$TMP/tiny.gguf" || fail "$label: models import failed"
    "${clean[@]}" "$program" --data-dir "$data" models list --json | grep -q '"name": "tiny.gguf"' \
        || fail "$label: models list --json does not list tiny.gguf"
    "${clean[@]}" "$program" --data-dir "$data" models runtime --context 256 > "$TMP/runtime.txt" || fail "$label: models runtime failed"
    sed 's/^/  /' "$TMP/runtime.txt"
    grep -q '^Runs: llama-cpp-python (in this build)$' "$TMP/runtime.txt" \
        || fail "$label: models runtime does not report the bundled runtime as available"
    local started ended
    started=$(now)
    "${clean[@]}" timeout 600 "$program" --data-dir "$data" ask --provider threadline --model tiny.gguf "hi" \
        > "$TMP/local-reply.txt" 2> "$TMP/local-reply.err" || {
        cat "$TMP/local-reply.err"; tail -20 "$data/runtime/runtime.log" 2>/dev/null
        fail "$label: ask --provider threadline failed"
    }
    ended=$(now)
    [ -s "$TMP/local-reply.txt" ] || fail "$label: ask --provider threadline printed no reply"
    grep -q 'Serving tiny.gguf on 127.0.0.1:' "$data/runtime/runtime.log" || fail "$label: the runtime log does not show the model served"
    "${clean[@]}" "$program" --data-dir "$data" models runtime | grep -q '^Not running$' \
        || fail "$label: ask left the runtime running"
    echo "$label: tiny.gguf answered $(wc -c < "$TMP/local-reply.txt") bytes ($(head -c 60 "$TMP/local-reply.txt" | tr '\n' ' ')...) in $(secs "$started" "$ended") (cold runtime)"
    local_times+=("$label $(secs "$started" "$ended")")
}
local_times=()
if [ "$runtime_in_deb" = 1 ]; then
    echo "== a downloaded model chatted with through the installed package (ask --provider threadline)"
    local_chat /usr/bin/threadline ".deb" "$TMP/local-deb"
fi

gui="skipped (xvfb-run not installed)"
if command -v xvfb-run >/dev/null; then
    echo "== the window under Xvfb (xcb platform plugin)"
    if out="$(env -i PATH=/usr/bin:/bin HOME="$TMP/home" LANG=C.UTF-8 timeout 60 \
              xvfb-run -a threadline --data-dir "$TMP/gui-data" --startup-probe 2>&1)"; then
        gui="first paint $(echo "$out" | tail -1) ms (xcb)"
    elif grep -qs 'ModuleNotFoundError' "$TMP/gui-data/logs/threadline.log"; then
        grep -A1 'ModuleNotFoundError' "$TMP/gui-data/logs/threadline.log" | tail -3
        fail "the window needs a module the build left out (see above)"
    else
        # A missing platform plugin is a packaging bug; anything else is the window's own business.
        echo "$out" | tail -5
        ! echo "$out" | grep -q "Could not load the Qt platform plugin" || fail "xcb platform plugin did not load"
        gui="FAILED (not a packaging error; see above)"
    fi
    echo "window: $gui"
fi

# --- menu entry, icons, metainfo -------------------------------------------------------------
desktop=/usr/share/applications/threadline.desktop
[ -f "$desktop" ] || fail "$desktop missing"
grep -q '^Exec=threadline' "$desktop" || fail "$desktop does not run threadline"
if command -v desktop-file-validate >/dev/null; then desktop-file-validate "$desktop" || fail "$desktop is invalid"; fi
for size in 16 22 24 32 48 64 128 256 512; do
    [ -f "/usr/share/icons/hicolor/${size}x${size}/apps/threadline.png" ] || fail "icon ${size}x${size} missing"
done
[ -f /usr/share/icons/hicolor/scalable/apps/threadline.svg ] || fail "scalable icon missing"
metainfo=/usr/share/metainfo/io.github.threadline.Threadline.metainfo.xml
[ -f "$metainfo" ] || fail "$metainfo missing"
mimexml=/usr/share/mime/packages/threadline.xml
[ -f "$mimexml" ] || fail "$mimexml missing"
grep -q 'x-scheme-handler/threadline' "$desktop" || fail "$desktop does not take threadline:// links"
if command -v appstreamcli >/dev/null; then appstreamcli validate --no-net "$metainfo" >/dev/null || fail "$metainfo is invalid"; fi
echo "menu entry, 9 icon sizes + scalable, metainfo, file types: installed"
installed_kb="$(dpkg-query -W -f='${Installed-Size}' threadline)"
files="$(dpkg -L threadline | wc -l)"

# --- portable tarball ------------------------------------------------------------------------
echo "== tarball self-test"
tar -xzf "$TARBALL" -C "$TMP"
portable="$(find "$TMP" -maxdepth 2 -type f -name threadline -path '*linux*' | head -1)"
t8=$(now)
env -i PATH=/usr/bin:/bin HOME="$TMP/home2" LANG=C.UTF-8 "$portable" --data-dir "$TMP/portable-data" --self-test \
    || fail "self-test of the tarball failed"
t9=$(now)
if [ "$runtime_in_deb" = 1 ]; then
    echo "== a downloaded model chatted with through the unpacked tarball"
    local_chat "$portable" "tarball" "$TMP/local-tarball"
fi

# --- remove ----------------------------------------------------------------------------------
echo "== remove"
t10=$(now)
$SUDO apt-get remove --purge -y threadline >/dev/null || $SUDO dpkg --purge threadline
t11=$(now)
! dpkg -s threadline >/dev/null 2>&1 || fail "threadline is still installed"
[ ! -e /opt/threadline ] || fail "files left under /opt/threadline: $(find /opt/threadline | head -5)"
[ ! -e /usr/bin/threadline ] || fail "/usr/bin/threadline left behind"
[ ! -e "$desktop" ] || fail "$desktop left behind"
! ls /usr/share/icons/hicolor/*/apps/threadline.* >/dev/null 2>&1 || fail "icons left behind"
[ ! -e "$metainfo" ] || fail "$metainfo left behind"
[ ! -e "$mimexml" ] || fail "$mimexml left behind"
echo "removed cleanly: nothing left under /opt/threadline, /usr/bin, applications, icons, metainfo"

# --- figures ---------------------------------------------------------------------------------
dist_bytes="$(du -sb build/dist/threadline | cut -f1)"
# What the runtime adds: llama.cpp's libraries (llama_cpp/lib) measured on disk and xz-compressed
# as dpkg-deb packs them; the server's Python modules (fastapi, uvicorn, starlette, ...) are in
# the PYZ archive, counted in the whole but not here.
runtime_line="not in this build"
if [ -d build/dist/threadline/_internal/llama_cpp ]; then
    rt_bytes="$(du -sb build/dist/threadline/_internal/llama_cpp | cut -f1)"
    rt_xz="$(tar -C build/dist/threadline/_internal -cf - llama_cpp | xz -6 -T0 | wc -c)"
    runtime_line="$(mb "$rt_bytes") on disk, $(mb "$rt_xz") xz (.deb without it: about $(mb $(( $(stat -c %s "$DEB") - rt_xz ))))"
fi
cat <<EOF

== threadline $VERSION ($ARCH): sizes
  one-folder build (build/dist/threadline)  $(mb "$dist_bytes")
  .deb ($(basename "$DEB"), xz)            $(mb "$(stat -c %s "$DEB")")
  installed size (dpkg)                     $(mb $((installed_kb * 1024))), $files paths
  tarball ($(basename "$TARBALL"))  $(mb "$(stat -c %s "$TARBALL")")
  local runtime (llama_cpp/)                $runtime_line
== times
  PyInstaller build   $(secs "$t0" "$t1")$([ "${REUSE:-0}" = 1 ] && echo " (reused)")
  .deb packaging      $(secs "$t1" "$t2")
  tarball packaging   $(secs "$t2" "$t3")
  install (apt)       $(secs "$t4" "$t5")
  self-test (.deb)    $(secs "$t6" "$t7")
  self-test (tarball) $(secs "$t8" "$t9")
  2 x ask (SDKs)      $(secs "$t_ask0" "$t_ask1")
  local model ask     ${local_times[*]:-skipped (no runtime)}
  window (Xvfb)       $gui
  remove (purge)      $(secs "$t10" "$t11")
  total               $(secs "$t0" "$t11")
test_deb: OK
EOF
