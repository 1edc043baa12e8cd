"""Fitting sticky context into its budget and the block that is sent (pure)."""

from __future__ import annotations

from threadline.core.gathered_context import (
    CONTEXT_HEADER,
    ContextCandidate,
    ContextOrigin,
    budget_for,
    estimate,
    fit,
    piece_text,
    render_block,
    with_context,
)


def file(name: str, size: int) -> ContextCandidate:
    return ContextCandidate(name, "a" * size, ContextOrigin.SESSION, source=f"/p/{name}")


def test_whole_candidates_are_kept_in_order_and_the_others_named() -> None:
    candidates = [file("one", 400), file("big", 4000), file("two", 400)]
    budget = estimate(CONTEXT_HEADER) + sum(estimate(piece_text(c)) for c in (candidates[0], candidates[2]))
    pieces, left_out = fit(candidates, budget)
    assert [p.label for p in pieces] == ["one", "two"]
    assert [o.label for o in left_out] == ["big"] and left_out[0].reason.startswith("over budget")
    assert all(p.text == "a" * 400 for p in pieces)  # never cut


def test_the_block_delimits_each_piece_with_its_path_or_command() -> None:
    hook = ContextCandidate("Hook: Branch", "main", ContextOrigin.HOOK, kind="hook", source='git "branch"')
    pieces, _ = fit([file("n.md", 3), hook], 10_000)
    block = render_block(pieces)
    assert block.startswith(CONTEXT_HEADER)
    assert '<file path="/p/n.md">\naaa\n</file>' in block
    assert "<hook command=\"git 'branch'\">\nmain\n</hook>" in block
    assert with_context("Be brief.", block) == f"Be brief.\n\n{block}"
    assert with_context("Be brief.", "") == "Be brief."
    assert render_block(()) == ""


def test_the_budget_is_the_share_and_never_more_than_the_room() -> None:
    assert budget_for(100_000, 0.75) == 75_000
    assert budget_for(100_000, 0.75, room=20_000) == 20_000
    assert budget_for(100_000, 1.5) == 100_000
    assert budget_for(8_000, 0.75, room=-100) == 0
