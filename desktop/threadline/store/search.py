"""Full-text search over message text, safe for anything a person types.

User input never reaches the FTS parser as syntax: it is split on whitespace,
each piece reduced to its letters and digits and quoted as a phrase, and the
last piece matches as a prefix (search-as-you-type) once it has two letters. So ``foo"``, ``AND (`` or a
lone ``*`` are plain words or nothing, never a syntax error.

Backends: FTS5 (SQLite) ordered by row id descending, which FTS5 walks
natively so the first 50 hits of a million rows come back without a sort;
a stored ``search_vector`` with a GIN index and ``ts_headline`` (PostgreSQL);
a plain substring scan elsewhere. Hits are newest first; archived sessions are
included, deleted ones cannot be (their rows and index entries are gone).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from threadline.core.session import SNIPPET_CLOSE, SNIPPET_OPEN, SearchHit, SessionInfo
from threadline.store.coltypes import UTCDateTime
from threadline.store.convert import as_utc, session_from_row
from threadline.store.core_tables import messages, sessions

MIN_PREFIX = 2
"""A last word shorter than this matches whole words only: a one-letter prefix matches
nearly every message, and no index makes that fast (FTS5 keeps 2- and 3-letter prefix indexes)."""
SNIPPET_WORDS = 16
SNIPPET_CHARS = 160
_TOKEN = re.compile(r"[^\W_]+")


def query_terms(text: str) -> list[list[str]]:
    """Whitespace-separated pieces of ``text``, each as its word tokens; empty pieces dropped."""
    return [tokens for piece in text.split() if (tokens := _TOKEN.findall(piece))]


def fts5_query(text: str) -> str | None:
    """An FTS5 MATCH expression: quoted phrases ANDed, the last one a prefix; ``None`` if empty."""
    terms = query_terms(text)
    if not terms:
        return None
    phrases = ['"' + " ".join(tokens) + '"' for tokens in terms]
    if len(terms[-1][-1]) >= MIN_PREFIX:
        phrases[-1] += "*"
    return " ".join(phrases)


def tsquery(text: str) -> str | None:
    """A ``to_tsquery`` expression with the same meaning as ``fts5_query``; ``None`` if empty."""
    terms = query_terms(text)
    if not terms:
        return None
    parts = [" <-> ".join(f"'{token.lower()}'" for token in tokens) for tokens in terms]
    if len(terms[-1][-1]) >= MIN_PREFIX:
        parts[-1] += ":*"
    return " & ".join(f"({p})" for p in parts)


@dataclass(frozen=True, slots=True)
class ChatScope:
    """Which chats a search reaches: one project's, or (``outside_projects``) those in no
    project, or all; ``exclude_session`` is left out (the chat that asks, docs/memory.md)."""

    project_id: str | None = None
    outside_projects: bool = False
    exclude_session: str | None = None


def search_messages(
    connection: sa.Connection,
    query: str,
    limit: int,
    project_id: str | None = None,
    scope: ChatScope | None = None,
) -> list[SearchHit]:
    """Messages matching ``query``, newest first; ``project_id`` keeps to that project's chats,
    ``scope`` says it all (``search_past_chats``)."""
    if scope is None:
        scope = ChatScope(project_id=project_id)
    dialect = connection.dialect.name
    if dialect == "sqlite":
        return _search_sqlite(connection, query, limit, scope)
    if dialect == "postgresql":
        return _search_postgres(connection, query, limit, scope)
    return _search_scan(connection, query, limit, scope)


TITLE_WINDOW = 2000
"""How many of the most recent sessions the title filter tries first (see ``search_session_titles``)."""
NEW_CHAT_TITLE = "New chat"
"""What the sidebar shows for a session without a title; the filter matches it too."""


def search_session_titles(
    connection: sa.Connection,
    query: str,
    limit: int,
    archived: bool | None = None,
    project_id: str | None = None,
) -> list[SessionInfo]:
    """Sessions whose title contains every piece of ``query`` (case-insensitive).

    With ``archived`` given, only that list (the sidebar's chats or its archived
    view) in the sidebar's order, pinned first; without it, every session, most
    recent first. No index serves a substring match, so the cost is bounded in
    two steps: the ``TITLE_WINDOW`` most recent sessions first (an index walk,
    about a millisecond), and only when they hold fewer than ``limit`` matches a
    scan of the whole table (tens of milliseconds at 100,000 sessions) — walking
    the index through every row instead costs twice that in random page reads.
    """
    terms = [" ".join(t) for t in query_terms(query)]
    if not terms:
        return []
    dialect = connection.dialect.name
    matches = sa.and_(*(_title_contains(term, dialect) for term in terms))
    if project_id is not None:
        matches = sa.and_(matches, sessions.c.project_id == project_id)
    order: list[sa.UnaryExpression[Any]] = [sessions.c.updated_at.desc(), sessions.c.id.desc()]
    if archived is not None:
        order.insert(0, sessions.c.pinned.desc())
    recent = sa.select(sessions.c.id).order_by(*order).limit(TITLE_WINDOW)
    if archived is not None:
        recent = recent.where(sessions.c.archived == archived)
    window = recent.subquery()
    first = sa.select(sessions).where(sessions.c.id.in_(sa.select(window.c.id)), matches)
    found = list(connection.execute(first.order_by(*order).limit(limit)))
    if len(found) < limit:
        scan = sa.select(sessions).where(matches)
        if archived is not None:
            # Through a function, so the planner scans the table instead of the index.
            scan = scan.where(sa.func.coalesce(sessions.c.archived, False) == archived)
        found = list(connection.execute(scan.order_by(*order).limit(limit)))
    return [session_from_row(row) for row in found]


def _title_contains(term: str, dialect: str) -> sa.ColumnElement[bool]:
    """``term`` in the title as shown. SQLite's LIKE already ignores case (ASCII, as its
    ``lower`` does), and without ``lower()`` on every row the scan is faster
    (docs/performance.md, "Full-text search")."""
    title = sessions.c.title
    contains = (
        title.contains(term, autoescape=True)
        if dialect == "sqlite"
        else title.icontains(term, autoescape=True)
    )
    if term.lower() in NEW_CHAT_TITLE.lower():
        return sa.or_(contains, title == "")
    return contains


_SQLITE_SEARCH = """
    SELECT message_id, session_id, title, snippet, created_at, thinking FROM (
        SELECT * FROM (
            SELECT m.id AS message_id, m.session_id AS session_id, s.title AS title,
                   snippet(messages_fts, 0, :open, :close, '…', :words) AS snippet,
                   m.created_at AS created_at, NULL AS thinking, m.seq AS seq
            FROM messages_fts
            JOIN messages AS m ON m.seq = messages_fts.rowid
            JOIN sessions AS s ON s.id = m.session_id
            WHERE messages_fts MATCH :query{project}
            ORDER BY messages_fts.rowid DESC
            LIMIT :limit
        )
        UNION ALL
        SELECT * FROM (
            SELECT m.id AS message_id, m.session_id AS session_id, s.title AS title,
                   NULL AS snippet, m.created_at AS created_at,
                   (SELECT group_concat(json_extract(value, '$.text'), char(10))
                    FROM json_each(m.content, '$.reasoning')) AS thinking,
                   m.seq AS seq
            FROM reasoning_fts
            JOIN messages AS m ON m.seq = reasoning_fts.rowid
            JOIN sessions AS s ON s.id = m.session_id
            WHERE reasoning_fts MATCH :query{project}
            ORDER BY reasoning_fts.rowid DESC
            LIMIT :limit
        )
    )
    ORDER BY seq DESC
    LIMIT :limit
    """
"""Hits in a reply's text (``messages_fts``) and in its thinking (``reasoning_fts``, migration
0007), newest first; each side is bounded before they are merged."""

_POSTGRES_SEARCH = """
    SELECT hit.id AS message_id, hit.session_id AS session_id, s.title AS title,
           ts_headline('simple'::regconfig, hit.text, to_tsquery('simple'::regconfig, :query), :options)
               AS snippet,
           hit.created_at AS created_at,
           jsonb_path_query_array(hit.content, '$.reasoning[*].text') AS thinking
    FROM (
        SELECT m.seq, m.id, m.session_id, m.text, m.content, m.created_at
        FROM messages AS m
        WHERE m.search_vector @@ to_tsquery('simple'::regconfig, :query){project}
        ORDER BY m.seq DESC
        LIMIT :limit
    ) AS hit
    JOIN sessions AS s ON s.id = hit.session_id
    ORDER BY hit.seq DESC
    """
_SCOPE_CLAUSES = {
    "sqlite": {
        "project": " AND s.project_id = :project",
        "outside": " AND s.project_id IS NULL",
        "exclude": " AND m.session_id != :exclude",
    },
    "postgresql": {
        "project": " AND m.session_id IN (SELECT id FROM sessions WHERE project_id = :project)",
        "outside": " AND m.session_id IN (SELECT id FROM sessions WHERE project_id IS NULL)",
        "exclude": " AND m.session_id <> :exclude",
    },
}
"""The clauses that keep a full-text search to some chats (``ChatScope``)."""


def _statement(template: str, dialect: str, scope: ChatScope, params: dict[str, object]) -> sa.TextualSelect:
    clauses = _SCOPE_CLAUSES[dialect]
    clause = ""
    if scope.project_id is not None:
        clause += clauses["project"]
        params["project"] = scope.project_id
    elif scope.outside_projects:
        clause += clauses["outside"]
    if scope.exclude_session is not None:
        clause += clauses["exclude"]
        params["exclude"] = scope.exclude_session
    return sa.text(template.format(project=clause)).columns(created_at=UTCDateTime())


_POSTGRES_OPTIONS = (
    f"StartSel={SNIPPET_OPEN}, StopSel={SNIPPET_CLOSE}, MaxWords={SNIPPET_WORDS + 8}, "
    f'MinWords={SNIPPET_WORDS // 2}, MaxFragments=1, FragmentDelimiter=" … "'
)


def _search_sqlite(connection: sa.Connection, query: str, limit: int, scope: ChatScope) -> list[SearchHit]:
    match = fts5_query(query)
    if match is None:
        return []
    params: dict[str, object] = {
        "open": SNIPPET_OPEN,
        "close": SNIPPET_CLOSE,
        "words": SNIPPET_WORDS,
        "query": match,
    }
    statement = _statement(_SQLITE_SEARCH, "sqlite", scope, params)
    rows = connection.execute(statement, {**params, "limit": limit})
    return _hits(rows, query)


def _search_postgres(connection: sa.Connection, query: str, limit: int, scope: ChatScope) -> list[SearchHit]:
    expression = tsquery(query)
    if expression is None:
        return []
    params: dict[str, object] = {"query": expression, "options": _POSTGRES_OPTIONS, "limit": limit}
    rows = connection.execute(_statement(_POSTGRES_SEARCH, "postgresql", scope, params), params)
    return _hits(rows, query)


THINKING_LABEL = "Thinking: "
"""Starts the snippet of a hit found only in a reply's thinking (the text shown is from there)."""


def _hits(rows: Iterable[Any], query: str) -> list[SearchHit]:
    """Search rows as hits, one per message: a hit whose snippet marks nothing in the reply's
    text was found in its thinking, so its snippet is cut from the thinking instead."""
    terms = [" ".join(t) for t in query_terms(query)]
    seen: set[str] = set()
    hits: list[SearchHit] = []
    for row in rows:
        if row.message_id in seen:
            continue
        seen.add(row.message_id)
        snippet = row.snippet or ""
        thinking = row.thinking
        if isinstance(thinking, list):  # PostgreSQL hands the blocks' text as a JSON array
            thinking = "\n".join(str(t) for t in thinking)
        if thinking and SNIPPET_OPEN not in snippet:
            snippet = THINKING_LABEL + make_snippet(str(thinking), terms)
        hits.append(_hit(row.session_id, row.message_id, row.title, snippet, row.created_at))
    return hits


def _search_scan(connection: sa.Connection, query: str, limit: int, scope: ChatScope) -> list[SearchHit]:
    """Backends without a text index: substring match on every piece (slow but correct)."""
    terms = [" ".join(t) for t in query_terms(query)]
    if not terms:
        return []
    statement = sa.select(
        messages.c.session_id, messages.c.id, messages.c.text, messages.c.created_at, sessions.c.title
    ).join(sessions, sessions.c.id == messages.c.session_id)
    for term in terms:
        statement = statement.where(messages.c.text.icontains(term, autoescape=True))
    if scope.project_id is not None:
        statement = statement.where(sessions.c.project_id == scope.project_id)
    elif scope.outside_projects:
        statement = statement.where(sessions.c.project_id.is_(None))
    if scope.exclude_session is not None:
        statement = statement.where(messages.c.session_id != scope.exclude_session)
    statement = statement.order_by(messages.c.seq.desc()).limit(limit)
    return [
        _hit(row.session_id, row.id, row.title, make_snippet(row.text, terms), row.created_at)
        for row in connection.execute(statement)
    ]


def make_snippet(text: str, terms: Sequence[str], width: int = SNIPPET_CHARS) -> str:
    """A window of ``text`` around the first match with every match between the markers."""
    pattern = _terms_pattern(terms)
    if pattern is None:
        return text[:width]
    first = pattern.search(text)
    start = 0 if first is None else max(0, first.start() - width // 3)
    end = min(len(text), start + width)
    window = text[start:end]
    marked = pattern.sub(lambda m: f"{SNIPPET_OPEN}{m.group(0)}{SNIPPET_CLOSE}", window)
    return ("…" if start else "") + marked + ("…" if end < len(text) else "")


def _terms_pattern(terms: Iterable[str]) -> re.Pattern[str] | None:
    alternatives = sorted({t for t in terms if t}, key=len, reverse=True)
    if not alternatives:
        return None
    return re.compile("|".join(re.escape(t) for t in alternatives), re.IGNORECASE)


def _hit(session_id: str, message_id: str, title: str, snippet: str, created_at: datetime) -> SearchHit:
    return SearchHit(
        session_id=session_id,
        message_id=message_id,
        session_title=title,
        snippet=snippet,
        created_at=as_utc(created_at),
    )
