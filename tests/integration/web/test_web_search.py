"""The search providers against loopback fakes of their documented JSON, through ``engine.web``.

Brave's and Tavily's keys go to the keychain (a memory keyring here) and never to the
database; their base URLs are pointed at the fake through ``engine.web.endpoints``, which only
tests change. DuckDuckGo cannot be reached without network: it is offered and fails saying so.
"""

from __future__ import annotations

import sqlite3

import keyring
import pytest
from tests.support.web_servers import ARTICLE_TITLE, BRAVE_KEY, TAVILY_KEY, WebServer

from threadline.engine.engine import DATABASE_FILENAME, Engine
from threadline.engine.web import WebSettingsError
from threadline.web import Endpoints, WebError, WebProvider

pytestmark = pytest.mark.asyncio


def database_text(engine: Engine) -> str:
    with sqlite3.connect(engine.data_dir / DATABASE_FILENAME) as db:
        return "\n".join(str(row) for row in db.execute("select * from settings"))


async def test_searxng_results_come_back_as_title_url_and_snippet(engine: Engine, web: WebServer) -> None:
    await engine.web.use(WebProvider.SEARXNG, searxng_url=web.base_url)
    results = await engine.web.search("albatross", 5)
    assert [r.title for r in results] == [ARTICLE_TITLE, "Heron pumps"]
    assert results[0].url == f"{web.base_url}/page.html" and "albatross valve" in results[0].snippet
    assert "works: 2 results" in await engine.web.test(await engine.web.config())


async def test_a_searxng_without_the_json_format_says_how_to_enable_it(
    engine: Engine, web: WebServer
) -> None:
    web.searxng_json = False
    await engine.web.use(WebProvider.SEARXNG, searxng_url=web.base_url)
    with pytest.raises(WebError, match=r"enable the JSON format in its settings\.yml"):
        await engine.web.search("albatross", 5)


async def test_brave_sends_its_key_from_the_keychain_and_reads_its_json(
    engine: Engine, web: WebServer
) -> None:
    engine.web.endpoints = Endpoints(brave=f"{web.base_url}/res/v1", tavily=web.base_url)
    await engine.web.use(WebProvider.BRAVE, api_key=BRAVE_KEY)
    results = await engine.web.search("albatross", 1)
    assert [r.title for r in results] == [ARTICLE_TITLE]
    method, path, headers = web.requests[-1]
    assert (method, path) == ("GET", "/res/v1/web/search?q=albatross&count=1")
    assert headers["X-Subscription-Token"] == BRAVE_KEY
    assert keyring.get_password("threadline-web", "brave") == BRAVE_KEY
    assert BRAVE_KEY not in database_text(engine) and "brave" in database_text(engine)


async def test_tavily_with_a_wrong_key_is_refused_and_with_the_right_one_answers(
    engine: Engine, web: WebServer
) -> None:
    engine.web.endpoints = Endpoints(brave=web.base_url, tavily=web.base_url)
    await engine.web.use(WebProvider.TAVILY, api_key="tvly-wrong")
    with pytest.raises(WebError, match=r"Tavily refused the request \(HTTP 401\): check the API key"):
        await engine.web.search("albatross", 5)
    config = await engine.web.config()
    assert "Tavily works: 2 results" in await engine.web.test(config, api_key=TAVILY_KEY)
    assert keyring.get_password("threadline-web", "tavily") == "tvly-wrong", "a test does not save its key"
    await engine.web.use(WebProvider.TAVILY, api_key=TAVILY_KEY)
    assert next(r.url for r in await engine.web.search("albatross", 5)) == f"{web.base_url}/page.html"
    assert (
        web.requests[-1][:2] == ("POST", "/search")
        and web.requests[-1][2]["Authorization"] == f"Bearer {TAVILY_KEY}"
    )


async def test_a_key_may_come_from_an_environment_variable(
    engine: Engine, web: WebServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine.web.endpoints = Endpoints(brave=f"{web.base_url}/res/v1")
    monkeypatch.setenv("MY_BRAVE", BRAVE_KEY)
    await engine.web.use(WebProvider.BRAVE, api_key_env="MY_BRAVE")
    assert (await engine.web.config()).api_key_env == "MY_BRAVE"
    assert len(await engine.web.search("albatross", 5)) == 2
    assert BRAVE_KEY not in database_text(engine)


async def test_a_provider_that_needs_a_key_is_not_chosen_without_one(engine: Engine) -> None:
    with pytest.raises(WebSettingsError, match="Brave Search needs an API key"):
        await engine.web.use(WebProvider.BRAVE)
    with pytest.raises(WebSettingsError, match="http://host:port"):
        await engine.web.use(WebProvider.SEARXNG, searxng_url="localhost:8888")
    assert (await engine.web.config()).provider is WebProvider.NONE


async def test_duckduckgo_is_offered_and_without_network_fails_saying_so(engine: Engine) -> None:
    config = await engine.web.use(WebProvider.DUCKDUCKGO)
    assert config.provider is WebProvider.DUCKDUCKGO and "best-effort" in config.provider.label
    with pytest.raises(WebSettingsError, match=r"DuckDuckGo could not be searched .*best-effort"):
        await engine.web.test(config)
