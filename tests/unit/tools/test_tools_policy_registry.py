"""Approval policy with trust rules, wire/policy names, previews and running calls in the registry."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from threadline.core.config import AgentConfig, Approval, ApprovalRule
from threadline.core.messages import ToolCall
from threadline.core.request import ToolSpec
from threadline.tools.builtin import BUILTIN_TOOL_NAMES, builtin_tools
from threadline.tools.mcp.manager import pattern_selects_server
from threadline.tools.registry import WIRE_NAME_PATTERN, ToolOutput, ToolRegistry


class FakeMcpTool:
    def __init__(self, wire: str, policy: str) -> None:
        self.spec = ToolSpec(wire, "fake")
        self.policy_name = policy

    async def call(self, arguments: dict[str, Any]) -> ToolOutput:
        return ToolOutput("ok")


def registry() -> ToolRegistry:
    tools = ToolRegistry(builtin_tools())
    tools.register(FakeMcpTool("git__git_status", "git/git_status"))
    tools.register(FakeMcpTool("git__git_commit", "git/git_commit"))
    return tools


def call(name: str, **arguments: Any) -> ToolCall:
    return ToolCall("c1", name, json.dumps(arguments))


def agent(
    *rules: ApprovalRule, default: Approval = Approval.ASK, enabled: tuple[str, ...] = ()
) -> AgentConfig:
    return AgentConfig("a", "A", approval_rules=rules, default_approval=default, enabled_tools=enabled)


def test_builtin_names_are_valid_for_both_providers() -> None:
    assert [t.spec.name for t in builtin_tools()] == list(BUILTIN_TOOL_NAMES)
    assert all(WIRE_NAME_PATTERN.match(n) for n in BUILTIN_TOOL_NAMES)
    with pytest.raises(ValueError, match="not accepted by providers"):
        ToolRegistry().register(FakeMcpTool("git/status", "git/status"))


def test_wire_and_policy_names() -> None:
    tools = registry()
    assert tools.get("git/git_status") is tools.get("git__git_status") is not None
    assert tools.policy_name("git__git_status") == "git/git_status" and tools.policy_name("shell") == "shell"
    assert tools.policy_name("gone__tool") == "gone__tool"
    assert [c.name for c in tools.for_policy([call("git__git_status"), call("shell")])] == [
        "git/git_status",
        "shell",
    ]
    offered = tools.offered(agent(enabled=("git/*", "read_file")))
    assert [s.name for s in offered] == ["read_file", "git__git_status", "git__git_commit"]
    tools.unregister("git/git_commit")
    assert tools.get("git__git_commit") is None and "git__git_commit" not in tools.names()


@pytest.mark.parametrize(
    ("rules", "default", "name", "arguments", "expected"),
    [
        ((), Approval.ASK, "read_file", {}, Approval.ASK),
        ((), Approval.ALLOW, "read_file", {}, Approval.ALLOW),
        ((), Approval.ALLOW, "shell", {"command": "ls"}, Approval.ASK),  # default does not trust shell
        ((), Approval.ALLOW, "write_file", {}, Approval.ASK),
        ((), Approval.DENY, "shell", {"command": "ls"}, Approval.DENY),
        ((ApprovalRule("*", Approval.ALLOW),), Approval.ASK, "shell", {"command": "ls"}, Approval.ASK),
        ((ApprovalRule("*", Approval.ALLOW),), Approval.ASK, "read_file", {}, Approval.ALLOW),
        (
            (ApprovalRule("shell", Approval.ALLOW),),
            Approval.ASK,
            "shell",
            {"command": "rm -rf /"},
            Approval.ALLOW,
        ),
        (
            (ApprovalRule("shell", Approval.ALLOW, "git status*"),),
            Approval.ASK,
            "shell",
            {"command": "git status --short"},
            Approval.ALLOW,
        ),
        (
            (ApprovalRule("shell", Approval.ALLOW, "git status*"),),
            Approval.ALLOW,
            "shell",
            {"command": "git push"},
            Approval.ASK,
        ),
        ((ApprovalRule("s*", Approval.DENY),), Approval.ALLOW, "shell", {"command": "ls"}, Approval.DENY),
        ((ApprovalRule("git/*", Approval.ALLOW),), Approval.ASK, "git__git_status", {}, Approval.ALLOW),
        (
            (ApprovalRule("git/git_commit", Approval.DENY), ApprovalRule("git/*", Approval.ALLOW)),
            Approval.ASK,
            "git__git_commit",
            {},
            Approval.DENY,
        ),
        ((ApprovalRule("git/*", Approval.ALLOW),), Approval.ASK, "list_directory", {}, Approval.ASK),
    ],
)
def test_policy(
    rules: tuple[ApprovalRule, ...],
    default: Approval,
    name: str,
    arguments: dict[str, Any],
    expected: Approval,
) -> None:
    assert registry().approval(agent(*rules, default=default), call(name, **arguments)) is expected


def test_always_allow_rules() -> None:
    tools = registry()
    shell_rule = tools.always_allow_rule(call("shell", command="rm -rf build/*"))
    assert shell_rule.pattern == "shell" and shell_rule.matches("shell", "rm -rf build/*")
    assert not shell_rule.matches("shell", "rm -rf build/x")  # the exact command, wildcards escaped
    trusting = agent(shell_rule, default=Approval.ASK)
    assert tools.approval(trusting, call("shell", command="rm -rf build/*")) is Approval.ALLOW
    assert tools.approval(trusting, call("shell", command="rm -rf /")) is Approval.ASK
    assert tools.always_allow_rule(call("git/git_status")) == ApprovalRule("git/git_status", Approval.ALLOW)
    assert tools.always_allow_rule(call("write_file", path="x")) == ApprovalRule("write_file", Approval.ALLOW)
    empty = tools.always_allow_rule(call("shell", command=""))
    assert not empty.matches("shell", "ls")


def test_preview_with_explicit_folders(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("old\n")
    tools = registry()
    diff = tools.preview(call("write_file", path="a.txt", content="new\n"), allowed_folders=[str(tmp_path)])
    assert diff is not None and "-old\n+new\n" in diff
    assert tools.preview(call("shell", command="ls")) is None
    refused = tools.preview(
        call("write_file", path="/etc/passwd", content=""), allowed_folders=[str(tmp_path)]
    )
    assert refused is not None and refused.startswith("(no preview: Refused")


@pytest.mark.asyncio
@pytest.mark.expected_log_warnings("tool boom failed: kaput")
async def test_run_turns_failures_into_error_results() -> None:
    class Boom:
        spec = ToolSpec("boom")

        async def call(self, arguments: dict[str, Any]) -> ToolOutput:
            raise RuntimeError("kaput")

    class Slow:
        spec = ToolSpec("slow")
        timeout = 0.05

        async def call(self, arguments: dict[str, Any]) -> ToolOutput:
            import asyncio

            await asyncio.sleep(5)
            return ToolOutput("never")

    tools = ToolRegistry([Boom(), Slow()])
    assert "kaput" in (await tools.run(ToolCall("1", "boom"))).text
    slow = await tools.run(ToolCall("2", "slow"))
    assert slow.is_error and "within 0.05 s" in slow.text
    assert "not valid JSON" in (await tools.run(ToolCall("3", "boom", "{nope"))).text
    assert "not available" in (await tools.run(ToolCall("4", "nothing"))).text


@pytest.mark.parametrize(
    ("pattern", "server", "expected"),
    [
        ("git/*", "git", True),
        ("git/git_status", "git", True),
        ("g*/*", "git", True),
        ("*", "git", True),
        ("time/*", "git", False),
        ("shell", "git", False),
        ("git", "git", False),
    ],
)
def test_patterns_select_servers(pattern: str, server: str, expected: bool) -> None:
    assert pattern_selects_server(pattern, server) is expected
