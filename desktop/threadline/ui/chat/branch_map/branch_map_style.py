"""How the branch map looks: its geometry and the colour of each kind of node, from the theme.

The map reads the same ``ThemeColors`` as the rest of the window. It needs one colour
the theme does not name — the accent of a tangent, a side conversation — which is
chosen here per light, dark and high-contrast theme so it stays distinct from the
blue of the person's messages and the amber of tool rounds.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from PySide6.QtGui import QColor

from threadline.core.messages import Message, MessageKind, MessageStatus
from threadline.ui.common.theme import ThemeColors

ROW_HEIGHT = 22
COLUMN_WIDTH = 18
MARGIN_TOP = 16
MARGIN_LEFT = 40
"""Room for the turn numbers drawn every few rows in the left gutter."""
MARGIN_RIGHT = 24
"""Room right of the last column (a checkpoint's name may run past it: names are short and elided)."""
NODE_RADIUS = 4.5
ACTIVE_NODE_RADIUS = 5.5
TURN_LABEL_EVERY = 10


class NodeShape(Enum):
    DOT = "dot"
    DIAMOND = "diamond"
    """A marker: something that changed (an agent, a tangent), not something said."""
    SQUARE = "square"
    """A summary standing in for earlier messages."""


class NodeRole(Enum):
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"
    MARKER = "marker"
    SUMMARY = "summary"


def node_role(message: Message) -> NodeRole:
    if message.kind is MessageKind.MARKER:
        return NodeRole.MARKER
    if message.kind is MessageKind.SUMMARY:
        return NodeRole.SUMMARY
    if message.kind in (MessageKind.TOOL_CALLS, MessageKind.TOOL_RESULTS, MessageKind.CANCELLED_TOOL_USES):
        return NodeRole.TOOL
    return NodeRole.ASSISTANT if message.is_assistant else NodeRole.USER


ROLE_NAMES = {
    NodeRole.USER: "You",
    NodeRole.ASSISTANT: "Assistant",
    NodeRole.TOOL: "Tool round",
    NodeRole.MARKER: "Marker",
    NodeRole.SUMMARY: "Summary",
}

SHAPES = {NodeRole.MARKER: NodeShape.DIAMOND, NodeRole.SUMMARY: NodeShape.SQUARE}


@dataclass(frozen=True, slots=True)
class MapPalette:
    """The colours the painter uses, made once per theme."""

    background: QColor
    text: QColor
    muted: QColor
    grid: QColor
    line: QColor
    """A parent link off the active path."""
    active_line: QColor
    lane: QColor
    """The soft band behind the shown path."""
    tangent: QColor
    focus: QColor
    hover: QColor
    flag: QColor
    flag_fill: QColor
    flag_text: QColor
    failed: QColor
    roles: dict[NodeRole, QColor]
    dim_alpha: float
    """How opaque a node off the active path is (the shown path stands out)."""

    def role(self, role: NodeRole) -> QColor:
        return self.roles[role]


def tangent_color(colors: ThemeColors) -> str:
    if colors.high_contrast:
        return "#c77dff" if colors.dark else "#6a00b8"
    return "#b18cf7" if colors.dark else "#7c4dde"


def palette_for(colors: ThemeColors) -> MapPalette:
    def c(value: str, alpha: float = 1.0) -> QColor:
        color = QColor(value)
        color.setAlphaF(alpha)
        return color

    assistant = "#9aa3ad" if colors.dark else "#6b7480"
    return MapPalette(
        background=c(colors.base),
        text=c(colors.text),
        muted=c(colors.muted),
        grid=c(colors.border, 0.55),
        line=c(colors.muted, 0.45 if not colors.high_contrast else 0.8),
        active_line=c(colors.accent, 1.0 if colors.high_contrast else 0.6),
        lane=c(colors.accent, 0.10 if not colors.dark else 0.14),
        tangent=c(tangent_color(colors)),
        focus=c(colors.text),
        hover=c(colors.accent, 0.16),
        flag=c(colors.success),
        flag_fill=c(colors.surface),
        flag_text=c(colors.text),
        failed=c(colors.error_text),
        roles={
            NodeRole.USER: c(colors.accent),
            NodeRole.ASSISTANT: c(colors.text if colors.high_contrast else assistant),
            NodeRole.TOOL: c(colors.warning),
            NodeRole.MARKER: c(colors.muted),
            NodeRole.SUMMARY: c(colors.success),
        },
        dim_alpha=0.8 if colors.high_contrast else 0.5,
    )


def is_unfinished(message: Message) -> bool:
    """Drawn hollow: a reply still streaming, or one that failed or was stopped."""
    return message.status is not MessageStatus.COMPLETE
