"""Where each message of a conversation tree sits on the branch map: a (row, column) grid.

The branch map draws the whole tree of a session — versions, tangents, checkpoints —
so a person can see where the conversation forked and jump to another branch. The
layout is pure data, computed here without Qt so it can be tested and timed alone:

* the row of a message is its depth (the root is row 0): reading down is reading on;
* a *chain* is a message and, below it, always the "primary" child down to a leaf. The
  primary child is the one on the active path, otherwise the newest (the branch that
  ``ConversationTree.newest_leaf_under`` follows), so every chain is a path a click
  can show;
* every other child starts a new chain in a column to the right of its parent's column.
  The chain of the active path is placed first and gets column 0, so the conversation
  being shown is the straight line down the left edge;
* columns are reused: a chain takes the leftmost column right of its parent's that is
  empty from the row above its first message to its last. Chains are placed in order
  of their first row (bucketed, not sorted), and "the leftmost free column at or right
  of c" is a descent in a segment tree of each column's last used row, so a tree of n
  messages with b branches lays out in O(n + b log b) — 10,000 messages in a few
  milliseconds (bench/branch_map_bench.py).

Messages reach the layout as ``(id, parent_id)`` pairs in parents-first order (the order
a ``ConversationTree`` iterates in, which is also sibling order), so the module does not
depend on the tree class; ``layout_conversation`` is the convenience for a tree.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from threadline.core.messages import Message, MessageKind
from threadline.core.tree import TANGENT_CHECKPOINT, ConversationTree

TANGENT_MARKER = "tangent"
"""The value of ``MarkerType.TANGENT``: a marker of this type starts a side conversation."""

NO_PARENT = -1


@dataclass(slots=True)
class TreeLayout:
    """The grid of one tree. Nodes are numbered 0..n-1 in the order they were given.

    Lists are indexed by node number; ``by_row[r]`` holds the nodes of row ``r`` ordered
    by column, so a painter finds a visible rectangle's nodes without looking at others.
    """

    ids: list[str]
    parents: list[int]
    """The parent's node number, or ``NO_PARENT`` for a root."""
    rows: list[int]
    columns: list[int]
    on_active_path: list[bool]
    tangent: list[bool]
    """Inside a tangent: the node is a tangent marker or descends from one."""
    primary_child: list[int]
    """The child that continues this node's chain (same column), or ``NO_PARENT`` for a leaf."""
    by_row: list[list[int]]
    index_of: dict[str, int]
    column_count: int
    active_leaf: int
    """The active leaf's node number, or ``NO_PARENT`` for an empty tree."""
    branch_count: int
    """Children that start a branch of their own (every child but the one continuing its parent's line)."""

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def row_count(self) -> int:
        return len(self.by_row)

    def node_at(self, row: int, column: int) -> int:
        """The node drawn at (row, column), or ``NO_PARENT`` when that cell is empty."""
        if not 0 <= row < len(self.by_row):
            return NO_PARENT
        for node in self.by_row[row]:
            if self.columns[node] == column:
                return node
        return NO_PARENT


def layout_conversation(tree: ConversationTree) -> TreeLayout:
    """The layout of ``tree``: its messages, its active leaf, its tangents."""
    # Ids and links only: a long chat's packed messages are not made (core/packed_history.py).
    heads = {m.id for m in tree.of_kinds((MessageKind.MARKER,)) if is_tangent_marker(m)}
    links = ((message_id, tree.parent_id(message_id)) for message_id in tree.ids())
    return layout_tree(links, tree.active_leaf, tangent_heads=heads)


def is_tangent_marker(message: Message) -> bool:
    """Whether ``message`` is the marker that opens a tangent (its branch is the side conversation)."""
    marker = message.marker
    return message.kind is MessageKind.MARKER and marker is not None and marker.type.value == TANGENT_MARKER


def checkpoint_names(tree: ConversationTree) -> dict[str, str]:
    """The checkpoints a person named (name → message id), without the internal tangent return point.

    Reads ``named_checkpoints`` when the tree has it, otherwise ``checkpoints`` minus
    the names Threadline keeps for itself (those start with ``__``).
    """
    named = getattr(tree, "named_checkpoints", None)
    source = named if isinstance(named, dict) else tree.checkpoints
    return {
        str(name): str(mid)
        for name, mid in source.items()
        if name != TANGENT_CHECKPOINT and not str(name).startswith("__")
    }


def layout_tree(
    nodes: Iterable[tuple[str, str | None]],
    active_leaf: str | None,
    *,
    tangent_heads: Iterable[str] = (),
) -> TreeLayout:
    """Lay out ``(id, parent_id)`` pairs given parents first; see the module docstring.

    Raises ``ValueError`` when a parent comes after its child or is missing, or when the
    active leaf is not among the nodes.
    """
    ids: list[str] = []
    parents: list[int] = []
    index_of: dict[str, int] = {}
    for mid, parent_id in nodes:
        if parent_id is None:
            parent = NO_PARENT
        else:
            found = index_of.get(parent_id)
            if found is None:
                raise ValueError(f"parent {parent_id!r} of {mid!r} is not before it")
            parent = found
        if mid in index_of:
            raise ValueError(f"message {mid!r} is given twice")
        index_of[mid] = len(ids)
        ids.append(mid)
        parents.append(parent)
    n = len(ids)

    children: list[list[int]] = [[] for _ in range(n)]
    roots: list[int] = []
    rows = [0] * n
    for node, parent in enumerate(parents):
        if parent == NO_PARENT:
            roots.append(node)
        else:
            children[parent].append(node)
            rows[node] = rows[parent] + 1

    active = NO_PARENT
    if active_leaf is not None:
        if active_leaf not in index_of:
            raise ValueError(f"active leaf {active_leaf!r} is not in the tree")
        active = index_of[active_leaf]
    elif roots:
        active = _newest_leaf(roots[-1], children)
    on_path = [False] * n
    node = active
    while node != NO_PARENT:
        on_path[node] = True
        node = parents[node]

    primary = [kids[-1] if kids else NO_PARENT for kids in children]
    node = active
    while node != NO_PARENT and parents[node] != NO_PARENT:
        primary[parents[node]] = node
        node = parents[node]

    tangent = [False] * n
    heads = {index_of[h] for h in tangent_heads if h in index_of}
    for node, parent in enumerate(parents):
        tangent[node] = node in heads or (parent != NO_PARENT and tangent[parent])

    columns, chains = _assign_columns(children, roots, primary, rows, parents, on_path)
    row_count = (max(rows) + 1) if n else 0
    by_row: list[list[int]] = [[] for _ in range(row_count)]
    for node in range(n):
        by_row[rows[node]].append(node)
    for row in by_row:
        if len(row) > 1:
            row.sort(key=columns.__getitem__)
    return TreeLayout(
        ids=ids,
        parents=parents,
        rows=rows,
        columns=columns,
        on_active_path=on_path,
        tangent=tangent,
        primary_child=primary,
        by_row=by_row,
        index_of=index_of,
        column_count=(max(columns) + 1) if n else 0,
        active_leaf=active,
        branch_count=chains - len(roots),
    )


def _newest_leaf(node: int, children: Sequence[list[int]]) -> int:
    while children[node]:
        node = children[node][-1]
    return node


def _assign_columns(
    children: Sequence[list[int]],
    roots: Sequence[int],
    primary: Sequence[int],
    rows: Sequence[int],
    parents: Sequence[int],
    on_path: Sequence[bool],
) -> tuple[list[int], int]:
    """Each node's column (chains in order of their first row, each in the leftmost free column)
    and how many chains there are."""
    n = len(parents)
    # Chain heads: the roots and every child that is not its parent's primary child.
    heads = list(roots)
    position = {r: i for i, r in enumerate(roots)}
    for node, kids in enumerate(children):
        if len(kids) > 1:
            for place, kid in enumerate(kids):
                if kid != primary[node]:
                    heads.append(kid)
                    position[kid] = place
    chain_end = {}
    for head in heads:
        node = head
        while primary[node] != NO_PARENT:
            node = primary[node]
        chain_end[head] = rows[node]
    buckets: dict[int, list[int]] = {}
    for head in heads:
        buckets.setdefault(rows[head], []).append(head)

    columns = [0] * n
    free = _ColumnSpans(len(heads))
    for row in sorted(buckets):
        bucket = buckets[row]
        if len(bucket) > 1:
            # The active chain first (column 0), then branches by their parent's column
            # and their place among siblings, so near branches stay near.
            bucket.sort(
                key=lambda h: (
                    not on_path[h],
                    columns[parents[h]] if parents[h] != NO_PARENT else -1,
                    position[h],
                )
            )
        for head in bucket:
            lowest = columns[parents[head]] + 1 if parents[head] != NO_PARENT else 0
            # Free means nothing there from the row above this chain (so a chain never
            # sits right under another's end, which would read as one line) to its end.
            column = free.claim(lowest, start=row - 1, end=chain_end[head])
            node = head
            while node != NO_PARENT:
                columns[node] = column
                node = primary[node]
    return columns, len(heads)


class _ColumnSpans:
    """The last row used in each column, with "leftmost column ≥ c free from row r" in O(log k).

    A segment tree over columns holding the minimum last-used row of each range; since
    chains are placed in order of their first row, a column is free for a chain exactly
    when its last used row is above the chain's start.
    """

    def __init__(self, capacity: int) -> None:
        size = 1
        while size < max(1, capacity):
            size *= 2
        self._size = size
        self._last = [-2] * (2 * size)

    def claim(self, lowest: int, *, start: int, end: int) -> int:
        column = self._find(1, 0, self._size, lowest, start)
        if column < 0:  # cannot happen: there are as many columns as chains
            raise ValueError("no free column")
        slot = column + self._size
        self._last[slot] = end
        slot //= 2
        while slot:
            self._last[slot] = min(self._last[2 * slot], self._last[2 * slot + 1])
            slot //= 2
        return column

    def _find(self, slot: int, lo: int, hi: int, lowest: int, start: int) -> int:
        """The leftmost column in ``[max(lo, lowest), hi)`` whose last row is above ``start``."""
        if hi <= lowest or self._last[slot] >= start:
            return -1
        if hi - lo == 1:
            return lo
        mid = (lo + hi) // 2
        left = self._find(2 * slot, lo, mid, lowest, start)
        return left if left >= 0 else self._find(2 * slot + 1, mid, hi, lowest, start)
