"""``fetch_page``'s download against a real page server on 127.0.0.1: text and title, a PDF,
the limits (redirects, size, time) and the local-address rule, hop by hop."""

from __future__ import annotations

import pytest
from tests.support.web_servers import ARTICLE_ANSWER, ARTICLE_TITLE, PDF_ANSWER, WebServer

from threadline.web import FetchLimits, PageFetcher, WebError
from threadline.web.addresses import checked_address
from threadline.web.config import origin_of
from threadline.web.fetch import user_agent

pytestmark = pytest.mark.asyncio


def allowing() -> PageFetcher:
    return PageFetcher(allow_local=True)


async def test_a_page_gives_its_main_text_and_title_without_the_menus(web: WebServer) -> None:
    page = await allowing().fetch(f"{web.base_url}/page.html")
    assert page.title == ARTICLE_TITLE
    assert ARTICLE_ANSWER in page.text
    assert "Cookie settings" not in page.text and "Log in" not in page.text
    assert page.kind == "html" and page.notes == ()
    headers = web.requests[-1][2]
    assert headers["User-Agent"] == user_agent() and user_agent().startswith("Threadline/")
    assert headers["Host"] == web.base_url.removeprefix("http://"), "the name goes as Host, not the address"


async def test_a_pdf_goes_through_the_document_readers(web: WebServer) -> None:
    page = await allowing().fetch(f"{web.base_url}/doc.pdf")
    assert page.kind == "pdf" and PDF_ANSWER in page.text


async def test_a_redirect_loop_stops_at_the_limit(web: WebServer) -> None:
    with pytest.raises(WebError, match="redirected more than 3 times"):
        await PageFetcher(allow_local=True, limits=FetchLimits(max_redirects=3)).fetch(f"{web.base_url}/loop")
    assert web.paths().count("/loop") == 4


async def test_a_huge_page_is_read_up_to_the_limit_and_says_so(web: WebServer) -> None:
    limits = FetchLimits(max_bytes=256 * 1024, max_chars=5000)
    page = await PageFetcher(allow_local=True, limits=limits).fetch(f"{web.base_url}/huge")
    assert len(page.text) <= 5000
    assert any("only its start was read" in note for note in page.notes)
    assert any("first 5,000 characters" in note for note in page.notes)


async def test_a_slow_page_hits_the_time_limit(web: WebServer) -> None:
    fetcher = PageFetcher(allow_local=True, limits=FetchLimits(seconds=0.5))
    with pytest.raises(WebError, match=r"did not finish loading within 0\.5 s"):
        await fetcher.fetch(f"{web.base_url}/slow")


async def test_file_and_other_schemes_are_refused() -> None:
    for url in ("file:///etc/passwd", "ftp://example.org/x", "gopher://x", "example.org/page"):
        with pytest.raises(WebError, match="http and https pages only"):
            await allowing().fetch(url)


async def test_a_loopback_page_is_refused_unless_local_addresses_are_allowed(web: WebServer) -> None:
    with pytest.raises(WebError, match="on this computer or the local network"):
        await PageFetcher().fetch(f"{web.base_url}/page.html")
    assert web.requests == [], "nothing was sent to the refused address"
    assert ARTICLE_ANSWER in (await allowing().fetch(f"{web.base_url}/page.html")).text


async def test_a_redirect_from_an_allowed_origin_to_loopback_is_refused(
    web: WebServer, other_web: WebServer
) -> None:
    """``web`` is the search provider's own origin (exempt); it bounces to ``other_web``."""
    fetcher = PageFetcher(exempt_origin=origin_of(web.base_url))
    assert ARTICLE_ANSWER in (await fetcher.fetch(f"{web.base_url}/page.html")).text
    with pytest.raises(WebError, match="on this computer or the local network"):
        await fetcher.fetch(f"{web.base_url}/redirect?to={other_web.base_url}/page.html")
    assert web.paths()[-1].startswith("/redirect") and other_web.requests == []


async def test_a_name_with_one_public_and_one_private_address_is_refused() -> None:
    async def lookup(host: str, port: int) -> list[str]:
        return ["93.184.216.34", "10.0.0.7"]

    with pytest.raises(WebError, match=r"rebind\.example \(10\.0\.0\.7\)"):
        await checked_address("rebind.example", 80, allow_local=False, lookup=lookup)
    assert await checked_address("rebind.example", 80, allow_local=True, lookup=lookup) == "93.184.216.34"


async def test_the_connection_goes_to_the_address_that_was_checked(web: WebServer) -> None:
    """A name resolved once, to loopback, allowed: the request reaches that address with the
    name as Host (no second lookup a rebinding DNS server could answer differently)."""
    lookups: list[str] = []

    async def lookup(host: str, port: int) -> list[str]:
        lookups.append(host)
        return ["127.0.0.1"]

    port = web.base_url.rsplit(":", 1)[1]
    page = await PageFetcher(allow_local=True, lookup=lookup).fetch(f"http://pages.example:{port}/page.html")
    assert page.title == ARTICLE_TITLE and lookups == ["pages.example"]
    assert web.requests[-1][2]["Host"] == f"pages.example:{port}"


async def test_an_international_name_is_looked_up_and_sent_in_its_ascii_form(web: WebServer) -> None:
    lookups: list[str] = []

    async def lookup(host: str, port: int) -> list[str]:
        lookups.append(host)
        return ["127.0.0.1"]

    port = web.base_url.rsplit(":", 1)[1]
    page = await PageFetcher(allow_local=True, lookup=lookup).fetch(
        f"http://münchen.example:{port}/page.html"
    )
    assert page.title == ARTICLE_TITLE and lookups == ["xn--mnchen-3ya.example"]
    assert web.requests[-1][2]["Host"] == f"xn--mnchen-3ya.example:{port}"
