"""The context meter of an open session: the parts of the next request against the model's window.

It reads what the next send would use (the session's effective agent, its model's
window, the tools offered, the latest sticky context gathered) without running
hooks or reading files again: the sticky part is the figure of the last request,
which is what the tab has shown since. Where compaction would start is the same
threshold the turn runner applies before sending, so the warning and the
compaction agree.
"""

from __future__ import annotations

import json
from dataclasses import asdict

from threadline.core.config import AgentConfig
from threadline.core.meter import ContextMeter, measure
from threadline.core.request import estimate_tokens_by_chars
from threadline.engine.live import LiveConversation
from threadline.engine.providers import ProviderHub
from threadline.engine.turn_runner import COMPACT_THRESHOLD, REPLY_RESERVE_TOKENS
from threadline.tools.registry import ToolRegistry


def meter_for(
    live: LiveConversation, agent: AgentConfig, hub: ProviderHub, tools: ToolRegistry, prompt: str
) -> ContextMeter:
    provider = live.info.provider or agent.provider
    model = live.info.model or agent.model
    window = hub.context_window(provider, model) if provider and model else None
    offered = tools.offered(agent)
    compact_at = None
    if window:
        tool_tokens = sum(estimate_tokens_by_chars(json.dumps(asdict(spec))) for spec in offered)
        budget = window - (agent.max_tokens or REPLY_RESERVE_TOKENS) - tool_tokens
        compact_at = int(COMPACT_THRESHOLD * budget) + tool_tokens
    gathered = live.last_context
    return measure(
        live.conversation.path(),
        system_prompt=agent.system_prompt,
        sticky_tokens=gathered.tokens if gathered is not None else 0,
        tools=offered,
        prompt=prompt,
        window=window,
        compact_at=compact_at,
    )
