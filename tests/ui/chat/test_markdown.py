from __future__ import annotations

from threadline.ui.chat.view.markdown import is_safe_link, render_markdown
from threadline.ui.common.theme import DARK, LIGHT


def test_code_blocks_are_highlighted_and_listed_for_copy() -> None:
    out = render_markdown("Intro\n\n```python\ndef f():\n    return 1\n```\n", LIGHT)
    assert out.code_blocks == ["def f():\n    return 1\n"]
    assert 'href="copy-code:0"' in out.html
    assert "<span style=" in out.html  # Pygments inline colours
    assert ">python<" in out.html


def test_streaming_render_skips_highlighting() -> None:
    out = render_markdown("```python\nx = 1\n```", DARK, highlight=False)
    assert "x = 1" in out.html
    assert '<span style="color: #' not in out.html


def test_raw_html_is_escaped_never_rendered() -> None:
    out = render_markdown("<b>bold</b> <script>alert(1)</script>", LIGHT)
    assert "<b>" not in out.html and "<script>" not in out.html
    assert "&lt;script&gt;" in out.html


def test_images_are_never_emitted() -> None:
    out = render_markdown("![a cat](https://example.com/cat.png) ![](file:///etc/passwd)", LIGHT)
    assert "<img" not in out.html
    assert "[image: a cat]" in out.html


def test_only_safe_links_keep_their_href() -> None:
    out = render_markdown("[ok](https://example.com) [mail](mailto:a@b.c) [bad](file:///etc/passwd)", LIGHT)
    assert 'href="https://example.com"' in out.html
    assert 'href="mailto:a@b.c"' in out.html
    assert "file:///etc/passwd" not in out.html.split("href=")[-1] or 'href="file' not in out.html
    assert 'href="file' not in out.html
    assert (
        is_safe_link("http://x") and not is_safe_link("javascript:alert(1)") and not is_safe_link("file:///x")
    )


def test_tables_and_lists() -> None:
    out = render_markdown("| a | b |\n|---|---|\n| 1 | 2 |\n\n- one\n- two\n\n1. x\n2. y\n", LIGHT)
    assert "<table" in out.html and "<th>a</th>" in out.html
    assert "<ul>" in out.html and "<ol>" in out.html


def test_tables_have_a_solid_grid_visible_on_white() -> None:
    out = render_markdown("| a | b |\n|---|---|\n| 1 | 2 |", LIGHT)
    assert "border-style: solid" in out.html  # Qt's default outset border vanishes on a light base
    assert LIGHT.code_border not in out.html.split("<table", 1)[1].split(">", 1)[0]
