"""An engine's start does not import what only an export, an import, an OpenAI provider or an
MCP server uses.

Every start imports ``engine.exporting`` (for ``ExportFormat``) and ``engine.usage_report``
(for the chat's meter) and ``tools.mcp_manager`` (the servers' records); the formats'
writers, the import's data model, the OpenAI provider (stream decoding, conversion, HTTP
client) and the MCP connection's code load when first used
(docs/performance.md, "Memory after start with the engine open"). The test runs in a fresh
interpreter: a start as the window does it leaves them out, then an export, a provider of
OpenAI's kind and an MCP server's record load them and work.
"""

from __future__ import annotations

from pathlib import Path

from tests.support.fresh_python import run_fresh

SCRIPT = """
import asyncio, sys
from pathlib import Path
from threadline.core.config import ProviderConfig, ProviderKind
from threadline.engine.engine import Engine
from threadline.engine.exporting import ExportFormat

LATER = (
    "threadline.interchange.export_markdown",
    "threadline.interchange.threadline_json",
    "threadline.interchange.model",
    "threadline.core.transcript",
    "threadline.llm.openai_provider",
    "threadline.tools.mcp_client",
)

def loaded():
    return [m for m in LATER if m in sys.modules]

async def main(data_dir):
    engine = await Engine.open(Path(data_dir))
    try:
        info = await engine.store.create_session(title="Letters")
        await engine.store.list_sessions(limit=100)
        await engine.store.list_providers()
        await engine.library.usage(info.id)
        assert not loaded(), loaded()
        target = Path(data_dir) / "export.json"
        await engine.library.export(target, ExportFormat.JSON, [info.id])
        assert '"Letters"' in target.read_text(encoding="utf-8")
        assert "Letters" in await engine.library.export_markdown(info.id)
        from threadline.llm.factory import make_provider
        provider = make_provider(ProviderConfig(name="OpenAI", kind=ProviderKind.OPENAI), "sk-test")
        await provider.aclose()
        from threadline.tools.mcp_config import McpServerConfig, Transport
        server = McpServerConfig(name="time", transport=Transport.STDIO, command="true")
        await engine.tool_servers.save_server(server)
        assert [s.name for s in await engine.tool_servers.states()] == ["time"]
        assert set(loaded()) == set(LATER), loaded()
    finally:
        await engine.aclose()

asyncio.run(main(sys.argv[1]))
"""


def test_a_start_leaves_export_import_openai_and_mcp_code_for_their_first_use(tmp_path: Path) -> None:
    run_fresh(SCRIPT, str(tmp_path))
