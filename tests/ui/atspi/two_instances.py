"""The reader side of the two-instances test, run with Debian's Python and pyatspi.

Starts two Threadline app processes (``sys.argv[1]`` and ``sys.argv[2]`` are their command
lines as JSON lists) on one database, each with the same chat open, finds both on the
accessibility bus by process id, types a prompt into A's message box and presses A's Send
(through the accessibility interfaces, as an assistive tool can), then watches B's
"Messages" list: every distinct text of B's last message is recorded until it holds the
whole reply (``sys.argv[3]``) with a status that no longer says streaming. Prints one JSON
object: what B showed, in order, and whether each step was reached.
"""

import json
import subprocess
import sys
import time

import pyatspi
from gi.repository import Atspi, GLib
from tree_walk import find  # beside this script

DEADLINE_S = 150
PROMPT = "Tell me about Paris"


def app_of(pid):
    desktop = pyatspi.Registry.getDesktop(0)
    for i in range(desktop.childCount):
        app = desktop.getChildAtIndex(i)
        try:
            if app is not None and app.get_process_id() == pid:
                # Read names and texts afresh each time: a growing reply changes its text
                # without an event (a screen reader is told once, when it ends).
                app.set_cache_mask(Atspi.Cache.NONE)
                return app
        except Exception:
            continue
    return None


def messages_of(app):
    return find(app, lambda n: n.getRoleName() == "list" and n.name in ("Conversation", "Messages"))


def main():
    command_a, command_b, wanted = json.loads(sys.argv[1]), json.loads(sys.argv[2]), sys.argv[3]
    # Be on the accessibility bus before the apps start: the first client brings the bus up,
    # and an app started before it is never registered on the desktop.
    pyatspi.Registry.registerEventListener(lambda _event: None, "object:announcement")
    apps = [subprocess.Popen(c) for c in (command_a, command_b)]
    result = {"found": [False, False], "sent": False, "seen": [], "finished": False}
    found = {}
    loop = GLib.MainLoop()
    start = time.monotonic()

    def poll():
        if time.monotonic() - start > DEADLINE_S or result["finished"]:
            loop.quit()
            return False
        try:
            if "b" not in found:
                a, b = app_of(apps[0].pid), app_of(apps[1].pid)
                result["found"] = [a is not None, b is not None]
                if a is None or b is None:
                    return True
                list_b = messages_of(b)
                result["b_list"] = None if list_b is None else list_b.childCount
                if list_b is None or not list_b.childCount:
                    return True
                found.update(a=a, b=b, list_b=list_b)
            a, list_b = found["a"], found["list_b"]
            if not result["sent"]:
                list_a = messages_of(a)
                box = find(a, lambda n: n.getRoleName() in ("text", "entry") and n.name == "Message")
                send = find(a, lambda n: n.getRoleName() == "push button" and n.name == "Send")
                result["a_has"] = [list_a is not None, box is not None, send is not None]
                if list_a is None or box is None or send is None:
                    return True
                box.queryEditableText().setTextContents(PROMPT)
                action = send.queryAction()
                action.doAction(0)
                result["sent"] = True
                return True
            last = list_b.getChildAtIndex(list_b.childCount - 1)
            if last is None:
                return True
            text = last.description or ""
            if text and (not result["seen"] or result["seen"][-1] != text):
                result["seen"].append(text)
            if text.strip() == wanted and "Streaming" not in last.name:
                result["finished"] = True
                result["last_name"] = last.name
                result["count"] = list_b.childCount
        except GLib.GError as err:  # the tree changed under the walk: look again
            result["last_error"] = str(err)
        return True

    GLib.timeout_add(100, poll)
    loop.run()
    for app in apps:
        app.terminate()
    for app in apps:
        try:
            app.wait(timeout=30)
        except subprocess.TimeoutExpired:
            app.kill()
    result["exits"] = [app.returncode for app in apps]
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
