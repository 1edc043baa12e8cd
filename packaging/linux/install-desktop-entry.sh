#!/bin/sh
# Add the portable Threadline build (this folder) to the desktop menu of the current user:
# ~/.local/share/applications/threadline.desktop (Exec points here), the hicolor icons and
# Threadline's file types (~/.local/share/mime/packages/threadline.xml; docs/desktop.md).
#   ./install-desktop-entry.sh            install or update
#   ./install-desktop-entry.sh --remove   take the menu entry and icons away again
set -eu
HERE="$(cd "$(dirname "$0")" && pwd)"
DATA="${XDG_DATA_HOME:-$HOME/.local/share}"
APPS="$DATA/applications"
ICONS="$DATA/icons/hicolor"
MIME="$DATA/mime"

if [ "${1:-}" = "--remove" ]; then
    rm -f "$APPS/threadline.desktop" "$MIME/packages/threadline.xml"
    find "$ICONS" -path '*/apps/threadline.*' -delete 2>/dev/null || true
    echo "Removed the Threadline menu entry."
else
    mkdir -p "$APPS"
    sed -e "s|^Exec=threadline|Exec=\"$HERE/threadline\"|" -e "s|^TryExec=threadline|TryExec=$HERE/threadline|" \
        "$HERE/share/applications/threadline.desktop" > "$APPS/threadline.desktop"
    (cd "$HERE/share/icons/hicolor" && find . -name 'threadline.*' | while read -r f; do
        mkdir -p "$ICONS/$(dirname "$f")" && cp "$f" "$ICONS/$f"; done)
    mkdir -p "$MIME/packages" && cp "$HERE/share/mime/packages/threadline.xml" "$MIME/packages/threadline.xml"
    echo "Added Threadline to the menu ($APPS/threadline.desktop)."
fi
command -v update-mime-database >/dev/null 2>&1 && [ -d "$MIME/packages" ] && update-mime-database "$MIME" || true
command -v update-desktop-database >/dev/null 2>&1 && update-desktop-database -q "$APPS" || true
command -v gtk-update-icon-cache >/dev/null 2>&1 && gtk-update-icon-cache -q -t "$ICONS" 2>/dev/null || true
exit 0
