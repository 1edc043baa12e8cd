"""dmgbuild settings for Threadline's macOS disk image.

Used by ``python packaging/build.py dmg``:
    dmgbuild -s packaging/macos/dmg_settings.py -D app=build/dist/Threadline.app \
             -D icon=build/icons/threadline.icns Threadline build/out/Threadline-<ver>-macos-<arch>.dmg

The window shows the app and an Applications link to drag it onto. Sign the .app (and
notarize the .dmg) after this step in the release workflow when the secrets are present.
"""

import os.path

# `defines` is injected by dmgbuild (-D key=value).
application = defines.get("app", "build/dist/Threadline.app")  # noqa: F821
appname = os.path.basename(application)

format = defines.get("format", "ULFO")  # noqa: F821 - lzfse, macOS 10.11+
filesystem = "APFS"
size = None  # computed from the contents

files = [application]
symlinks = {"Applications": "/Applications"}
hide_extension = [appname]

_icon = defines.get("icon")  # noqa: F821
if _icon and os.path.exists(_icon):
    icon = _icon  # volume icon
else:
    badge_icon = os.path.join(application, "Contents", "Resources", "threadline.icns")

background = "builtin-arrow"
window_rect = ((200, 120), (600, 380))
default_view = "icon-view"
show_status_bar = False
show_tab_view = False
show_toolbar = False
show_pathbar = False
show_sidebar = False
icon_size = 128
text_size = 13
icon_locations = {
    appname: (150, 190),
    "Applications": (450, 190),
}
