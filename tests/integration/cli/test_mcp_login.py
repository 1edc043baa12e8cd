"""``threadline mcp login`` / ``logout``: OAuth sign in on the terminal and in the browser.

``main`` runs in this process against a real OAuth-protected server on 127.0.0.1; the
"browser" is a thread that loads the page and follows its redirects back to Threadline's
loopback listener, as a browser would. Without a terminal the sign in is refused with a
message instead of waiting minutes for a browser nobody sees.
"""

from __future__ import annotations

import io
import threading
import webbrowser

import keyring
import pytest
from tests.support.oauth_servers import ServerFactory

from threadline.__main__ import main
from threadline.tools.mcp import oauth as mcp_oauth


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _browser(opened: list[str]) -> object:
    def open_page(url: str) -> bool:
        import httpx2

        def load() -> None:
            with httpx2.Client(timeout=60, follow_redirects=True) as client:
                client.get(url)

        opened.append(url)
        threading.Thread(target=load, daemon=True).start()
        return True

    return open_page


def _signed_in(url: str) -> bool:
    entries = keyring.get_keyring().entries  # type: ignore[attr-defined]
    return (mcp_oauth.SERVICE, f"{url} tokens") in entries


def test_login_signs_in_in_the_browser_and_logout_forgets_the_tokens(
    tmp_path: object,
    oauth_server: ServerFactory,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    url = oauth_server()
    data = ["--data-dir", str(tmp_path)]
    assert main([*data, "mcp", "add", "secured", "--url", url]) == 0
    opened: list[str] = []
    monkeypatch.setattr(webbrowser, "open", _browser(opened))
    monkeypatch.setattr("sys.stdin", Terminal())
    capsys.readouterr()

    assert main([*data, "mcp", "login", "secured"]) == 0
    printed = capsys.readouterr()
    assert printed.out.strip() == "signed in to MCP server secured"
    assert len(opened) == 1 and opened[0] in printed.err  # the address is printed too
    assert _signed_in(url)

    assert main([*data, "mcp", "logout", "secured"]) == 0
    assert capsys.readouterr().out.strip() == "signed out of MCP server secured"
    assert not _signed_in(url)


@pytest.mark.expected_log_warnings("no terminal here")
def test_login_without_a_terminal_is_refused_with_a_message(
    tmp_path: object,
    oauth_server: ServerFactory,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    url = oauth_server()
    data = ["--data-dir", str(tmp_path)]
    assert main([*data, "mcp", "add", "secured", "--url", url]) == 0
    monkeypatch.setattr("sys.stdin", io.StringIO())
    capsys.readouterr()
    assert main([*data, "mcp", "login", "secured"]) != 0
    err = capsys.readouterr().err
    assert "needs you to sign in, and there is no terminal here" in err
    assert "threadline mcp login secured" in err
    assert not _signed_in(url)
