"""The approval policy for one tool call (docs/design.md §1 "Tools", §6).

An agent's rules are tried in order and the first match wins (``AgentConfig``);
``ApprovalRule.argument_pattern`` matches the command line of shell calls
(``shell`` + ``git status*`` → allow) and the raw JSON arguments of others.

Tools that write files or run commands (``needs_trust``) always ask unless the
user trusted them *by name*:

* the agent's default approval does not apply to them: with no rule, they ask
  (a default of "deny" still denies);
* an "allow" rule counts only if its pattern is the tool's own name
  (``shell``, ``write_file``, or ``server/tool``) — a wildcard such as ``*`` or
  ``server/*`` that happens to match does not trust them, and the search goes on
  to the next rule;
* "deny" and "ask" rules apply however they are written.
"""

from __future__ import annotations

import glob

from threadline.core.config import AgentConfig, Approval, ApprovalRule
from threadline.core.messages import ToolCall


def argument_text(call: ToolCall) -> str:
    """What argument rules match: the ``command`` of shell-like tools, else the raw JSON."""
    command = call.parsed_arguments().get("command")
    return command if isinstance(command, str) else call.arguments


def approval_for(agent: AgentConfig, call: ToolCall, policy_name: str, needs_trust: bool) -> Approval:
    text = argument_text(call)
    for rule in agent.approval_rules:
        if not rule.matches(policy_name, text):
            continue
        if needs_trust and rule.approval is Approval.ALLOW and rule.pattern != policy_name:
            continue
        return rule.approval
    if needs_trust and agent.default_approval is Approval.ALLOW:
        return Approval.ASK
    return agent.default_approval


def always_allow_rule(call: ToolCall, policy_name: str, needs_trust: bool) -> ApprovalRule:
    """ "Always allow" for a tool that needs trust and has a command line trusts that command only."""
    command = call.parsed_arguments().get("command")
    if needs_trust and isinstance(command, str):
        return ApprovalRule(policy_name, Approval.ALLOW, argument_pattern=glob.escape(command) or "\x00")
    return ApprovalRule(policy_name, Approval.ALLOW)
