"""The context meter of an open session: the parts of the next request against the model's window.

It reads what the next send would use (the session's effective agent, its model's
window, the tools offered, the latest sticky context gathered) without running
hooks or reading files again: the sticky part is the figure of the last request,
which is what the tab has shown since. Where compaction would start comes from the
turn runner's own message budget and threshold, so the warning and the compaction
agree.
"""

from __future__ import annotations

from threadline.core.config import AgentConfig
from threadline.core.meter import ContextMeter, measure
from threadline.core.request import estimate_tool_tokens
from threadline.engine.compaction import COMPACT_THRESHOLD
from threadline.engine.live import LiveConversation
from threadline.engine.providers import ProviderHub
from threadline.engine.turn_runner import TurnRunner
from threadline.tools.registry import ToolRegistry


def meter_for(
    live: LiveConversation,
    agent: AgentConfig,
    runner: TurnRunner,
    hub: ProviderHub,
    tools: ToolRegistry,
    prompt: str,
    memory: str = "",
) -> ContextMeter:
    provider = live.info.provider or agent.provider
    model = live.info.model or agent.model
    window = hub.context_window(provider, model) if provider and model else None
    tool_tokens = estimate_tool_tokens(tools.offered(agent))
    budget = runner.token_budget(agent, provider, model) if window else None
    compact_at = None if budget is None else int(COMPACT_THRESHOLD * budget) + tool_tokens
    gathered = live.last_context
    return measure(
        live.conversation.tree,
        system_prompt=agent.system_prompt,
        sticky_tokens=gathered.tokens if gathered is not None else 0,
        tool_tokens=tool_tokens,
        prompt=prompt,
        window=window,
        compact_at=compact_at,
        instructions=runner.server_instructions(agent),
        knowledge_tokens=live.last_knowledge.tokens if live.last_knowledge is not None else 0,
        memory=memory,
    )
