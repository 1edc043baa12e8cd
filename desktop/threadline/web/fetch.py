"""``fetch_page``'s download: one page through ``httpx``, its readable text and title.

Every hop is checked (docs/web.md): only ``http`` and ``https``; the host resolved and each of
its addresses checked (``addresses.py``) unless local addresses are allowed or the hop is on the
search provider's own origin; the connection goes to the checked address, the name sent as
``Host`` and TLS server name, so the certificate is still checked against the name. Redirects
are followed here, one hop at a time, so a public page cannot bounce the fetch to
``127.0.0.1``. Limits: the whole fetch (all hops) within ``seconds``, at most ``max_redirects``
hops, at most ``max_bytes`` read (a longer HTML page is cut there and says so; a PDF must fit
``max_pdf_bytes``), and at most ``max_chars`` of text handed back.

Text and title come from ``trafilatura`` (the main text without menus and footers), with the
document readers' plain HTML-to-text as the fallback; PDFs go through the same readers as an
attached PDF (``documents``).
"""

from __future__ import annotations

import asyncio
import re
import tempfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from threadline.documents.extract import extract_in_thread
from threadline.documents.html_text import html_to_text
from threadline.documents.limits import DocumentLimits, describe_size
from threadline.documents.model import DocumentError
from threadline.llm._http import httpx_module
from threadline.web.addresses import Resolve, checked_address, resolve
from threadline.web.config import origin_of
from threadline.web.errors import WebError

MIB = 1024 * 1024
REDIRECTS = frozenset({301, 302, 303, 307, 308})


@cache
def user_agent() -> str:
    """``Threadline/<version> (fetch_page; …)``: a site can see who asks and why."""
    from threadline import version

    return (
        f"Threadline/{version()} (desktop LLM chat app; fetch_page reads a page a user's assistant asked for)"
    )


@dataclass(frozen=True, slots=True)
class FetchLimits:
    seconds: float = 20.0
    """The whole fetch, every hop and the extraction included."""
    max_redirects: int = 5
    max_bytes: int = 5 * MIB
    """Bytes of an HTML or text page read (decompressed); the rest is left unread."""
    max_pdf_bytes: int = 20 * MIB
    max_chars: int = 40_000
    """Characters of text handed to the model (about 10,000 tokens)."""


@dataclass(frozen=True, slots=True)
class Page:
    url: str
    """Where the page was finally read (after redirects)."""
    title: str
    text: str
    kind: str
    """``html``, ``pdf`` or ``text``."""
    notes: tuple[str, ...] = ()
    """What was left out ("cut at 5 MB", "first 40,000 characters")."""


class PageFetcher:
    def __init__(
        self,
        *,
        allow_local: bool = False,
        exempt_origin: tuple[str, str, int] | None = None,
        limits: FetchLimits | None = None,
        lookup: Resolve = resolve,
    ) -> None:
        self.allow_local = allow_local
        self.exempt_origin = exempt_origin
        """The search provider's own origin (a SearXNG on this computer): the user chose it."""
        self.limits = limits or FetchLimits()
        self._lookup = lookup

    async def fetch(self, url: str) -> Page:
        """The page at ``url``; ``WebError`` saying why not (refused, too slow, too many hops…)."""
        try:
            async with asyncio.timeout(self.limits.seconds):
                return await self._fetch(url)
        except TimeoutError:
            raise WebError(
                f"{url} did not finish loading within {self.limits.seconds:g} s and was stopped."
            ) from None

    async def _fetch(self, url: str) -> Page:
        httpx = httpx_module()
        seen = 0
        async with httpx.AsyncClient(
            follow_redirects=False,
            trust_env=False,  # a proxy would resolve the name itself, past the address check
            timeout=httpx.Timeout(self.limits.seconds),
        ) as client:
            while True:
                target = self._parse(url)
                request = await self._request(client, target)
                try:
                    response = await client.send(request, stream=True)
                except httpx.TransportError as err:
                    raise WebError(f"{url} could not be reached ({type(err).__name__}: {err}).") from err
                try:
                    location = response.headers.get("location")
                    if response.status_code in REDIRECTS and location:
                        seen += 1
                        if seen > self.limits.max_redirects:
                            most = self.limits.max_redirects
                            raise WebError(f"{url} redirected more than {most} times; stopped there.")
                        url = str(target.join(location))
                        continue
                    if response.status_code >= 400:
                        raise WebError(
                            f"{url} answered HTTP {response.status_code} {response.reason_phrase}."
                        )
                    return await self._read(url, response)
                finally:
                    await response.aclose()

    def _parse(self, url: str) -> Any:
        scheme = urlsplit(url).scheme.lower()
        if scheme not in ("http", "https"):
            shown = f"{scheme}: addresses" if scheme else "Addresses without http:// or https://"
            raise WebError(f"{shown} are refused: fetch_page reads http and https pages only.")
        try:
            target = httpx_module().URL(url)
        except Exception as err:
            raise WebError(f"{url} is not a web address Threadline can read ({err}).") from err
        if not target.host:
            raise WebError(f"{url} names no host.")
        return target

    async def _request(self, client: Any, target: Any) -> Any:
        """The request for one hop, sent to the checked address of its host."""
        host = target.raw_host.decode("ascii")  # IDNA-encoded: what DNS, Host and TLS take
        port = target.port or (443 if target.scheme == "https" else 80)
        exempt = self.exempt_origin is not None and origin_of(str(target)) == self.exempt_origin
        address = await checked_address(
            host, port, allow_local=self.allow_local or exempt, lookup=self._lookup
        )
        netloc = host if ":" not in host else f"[{host}]"
        if target.port is not None:
            netloc = f"{netloc}:{target.port}"
        extensions = {"sni_hostname": host} if target.scheme == "https" else {}
        return client.build_request(
            "GET",
            target.copy_with(host=address),
            headers={
                "Host": netloc,
                "User-Agent": user_agent(),
                "Accept": "text/html,application/xhtml+xml,application/pdf,text/plain;q=0.9,*/*;q=0.5",
            },
            extensions=extensions,
        )

    async def _read(self, url: str, response: Any) -> Page:
        content_type = response.headers.get("content-type", "").split(";", 1)[0].strip().lower()
        is_pdf = content_type == "application/pdf" or url.lower().split("?", 1)[0].endswith(".pdf")
        cap = self.limits.max_pdf_bytes if is_pdf else self.limits.max_bytes
        body = bytearray()
        cut = False
        async for chunk in response.aiter_bytes():
            body.extend(chunk)
            if len(body) > cap:
                cut = True
                del body[cap:]
                break
        data = bytes(body)
        if data.startswith(b"%PDF-"):
            is_pdf = True
        if is_pdf:
            if cut:
                raise WebError(f"The PDF at {url} is larger than {describe_size(cap)}; it was not read.")
            return await self._pdf(url, data)
        notes = [f"The page is larger than {describe_size(cap)}; only its start was read."] if cut else []
        if content_type in ("text/html", "application/xhtml+xml", "") or _looks_like_html(data):
            title, text = await asyncio.to_thread(_html_text, data, url, response.encoding or "utf-8")
            return self._page(url, title, text, "html", notes)
        if content_type.startswith("text/") or content_type in ("application/json", "application/xml"):
            text = data.decode(response.encoding or "utf-8", errors="replace")
            return self._page(url, "", text, "text", notes)
        raise WebError(f"{url} is not a page Threadline can read (its type is {content_type}).")

    async def _pdf(self, url: str, data: bytes) -> Page:
        name = unquote(urlsplit(url).path.rsplit("/", 1)[-1]) or "page.pdf"
        if not name.lower().endswith(".pdf"):
            name += ".pdf"
        with tempfile.TemporaryDirectory(prefix="threadline-web-") as folder:
            path = Path(folder) / re.sub(r"[^\w.-]", "_", name)
            path.write_bytes(data)
            limits = DocumentLimits(max_file_bytes=self.limits.max_pdf_bytes)
            try:
                document = await extract_in_thread(path, limits=limits)
            except DocumentError as err:
                raise WebError(f"The PDF at {url} could not be read: {err.user_message}") from err
        title = name
        return self._page(url, title, document.text, "pdf", list(document.notes))

    def _page(self, url: str, title: str, text: str, kind: str, notes: list[str]) -> Page:
        text = text.strip()
        if not text:
            raise WebError(f"{url} holds no readable text.")
        if len(text) > self.limits.max_chars:
            text = text[: self.limits.max_chars]
            notes.append(f"Only the first {self.limits.max_chars:,} characters of the text are given.")
        return Page(url=url, title=title.strip(), text=text, kind=kind, notes=tuple(notes))


def _looks_like_html(data: bytes) -> bool:
    head = data[:512].lstrip().lower()
    return head.startswith((b"<!doctype html", b"<html"))


_TITLE = re.compile(r"<title[^>]*>(.*?)</title>", re.IGNORECASE | re.DOTALL)


def _html_text(data: bytes, url: str, encoding: str) -> tuple[str, str]:
    """(title, main text) by ``trafilatura``; the whole page as text where it finds no main text."""
    import trafilatura

    html = data.decode(encoding, errors="replace")
    document = trafilatura.bare_extraction(html, url=url, with_metadata=True, include_tables=True)
    title = str(getattr(document, "title", "") or "") if document is not None else ""
    text = str(getattr(document, "text", "") or "") if document is not None else ""
    if not title:
        match = _TITLE.search(html)
        title = html_to_text(match.group(1)) if match else ""
    if not text.strip():
        text = html_to_text(html)
    return title, text
