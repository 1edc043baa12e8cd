"""Finding a node in an application's accessibility tree, for the readers run with Debian's
Python (pyatspi), as a screen reader walks it: depth first, a node that goes away mid-walk
simply not found (the caller looks again on its next poll)."""


def find(node, pred, depth=0, max_depth=16):
    """The first node under ``node`` (itself included) for which ``pred`` holds, or None."""
    if node is None or depth > max_depth:
        return None
    try:
        if pred(node):
            return node
        for i in range(node.childCount):
            hit = find(node.getChildAtIndex(i), pred, depth + 1, max_depth)
            if hit is not None:
                return hit
    except Exception:  # a node can go away while it is walked
        return None
    return None
