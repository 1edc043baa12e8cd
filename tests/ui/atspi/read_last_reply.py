"""The reader side of the AT-SPI end-to-end test, run with Debian's Python and pyatspi.

Starts the app (``sys.argv[1:]`` is its command line), finds it on the accessibility bus
as Orca would — the desktop's applications, then the tree below the app — and waits for
the chat's last list item to hold the finished reply. Prints one JSON object: what the
tree said (roles, names, descriptions, actions of the last item, states) and the
announcements heard. Exit status 0 unless the app never appeared.
"""

import json
import subprocess
import sys
import time

import pyatspi
from gi.repository import GLib
from tree_walk import find  # beside this script

APP_NAME = "threadline-atspi-e2e"
WANTED = "The capital of France is Paris."
PROBE = "Accessibility probe"  # what the app announces until the reader says "start"
DEADLINE_S = 90


def the_app():
    desktop = pyatspi.Registry.getDesktop(0)
    for i in range(desktop.childCount):
        app = desktop.getChildAtIndex(i)
        if app is not None and app.name == APP_NAME:
            return app
    return None


def describe(item):
    actions = []
    try:
        action = item.queryAction()
        actions = [(action.getName(i), action.getKeyBinding(i)) for i in range(action.nActions)]
    except NotImplementedError:
        pass
    states = item.getState()
    return {
        "role": item.getRoleName(),
        "name": item.name,
        "description": item.description,
        "actions": actions,
        "focusable": states.contains(pyatspi.STATE_FOCUSABLE),
    }


def main():
    heard = []
    probes_heard = []
    result = {"found_app": False}
    loop = GLib.MainLoop()
    start = time.monotonic()
    done_at = []

    def on_announcement(event):
        text = str(event.any_data)
        (probes_heard if text == PROBE else heard).append(text)

    # Listen before the app starts: Qt's bridge learns of listeners from the registry when it
    # connects, and on a busy machine it could miss one registered later (it then sends no
    # announcements at all).
    pyatspi.Registry.registerEventListener(on_announcement, "object:announcement")
    app_proc = subprocess.Popen(sys.argv[1:], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    app_proc.stdout.readline()  # "ready": the window is shown

    def poll():
        # Everything runs on the GLib loop: pyatspi is not safe to call from another thread.
        if done_at:
            if time.monotonic() - done_at[0] > 1.5:  # time for a second announcement, if any, to show
                loop.quit()
                return False
            return True
        if time.monotonic() - start > DEADLINE_S:
            loop.quit()
            return False
        try:
            app = the_app()
            if app is None:
                return True
            result["found_app"] = True
            chat = find(app, lambda n: n.getRoleName() == "list" and n.name == "Messages")
            if chat is None or not chat.childCount:
                return True
            if not result.get("started"):
                # Let the reply stream once the list is there and an announcement has come
                # through, so the one that matters cannot be sent before the app knows we listen.
                if not probes_heard:
                    return True
                app_proc.stdin.write("start\n")
                app_proc.stdin.flush()
                result["started"] = True
                return True
            last = chat.getChildAtIndex(chat.childCount - 1)
            # Finished means the whole text AND a status that no longer says streaming (the
            # text can arrive a moment before the status), and the announcement was heard.
            finished = last is not None and last.description == WANTED and "Streaming" not in last.name
            if last is not None:  # what a failure report shows: where the reader got to
                result["last_seen"] = [chat.childCount, last.name, last.description, len(heard)]
            if finished and heard:
                result["count"] = chat.childCount
                result["items"] = [describe(chat.getChildAtIndex(i)) for i in range(chat.childCount)]
                done_at.append(time.monotonic())
        except GLib.GError as err:  # the tree changed under the walk: look again
            result["last_error"] = str(err)
        return True

    GLib.timeout_add(200, poll)
    loop.run()
    result["announcements"] = list(heard)
    try:
        app_proc.stdin.close()
        app_proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        app_proc.kill()
    result["app_exit"] = app_proc.returncode
    print(json.dumps(result))
    return 0 if result["found_app"] else 1


if __name__ == "__main__":
    sys.exit(main())
