"""The connection test's sentences for failures the private test server cannot produce (it trusts
loopback and has no TLS): libpq's texts as psycopg raises them become plain advice."""

from __future__ import annotations

import psycopg
import pytest

from threadline.engine.database_choice import ServerChoice
from threadline.engine.database_probe import explain_failure

SERVER = ServerChoice("db.example.org", 5432, "chats", "ana", "require")


@pytest.mark.parametrize(
    ("driver_text", "expected"),
    [
        (
            'connection failed: connection to server at "10.0.0.5", port 5432 failed: FATAL:  '
            'password authentication failed for user "ana"',
            "The server refused to sign in user “ana”: the user name or password is wrong.",
        ),
        (
            'connection failed: connection to server at "10.0.0.5", port 5432 failed: fe_sendauth: '
            "no password supplied",
            "The server asks for a password. Type it in the Password field and test again.",
        ),
        (
            'connection failed: connection to server at "10.0.0.5", port 5432 failed: FATAL:  no '
            'pg_hba.conf entry for host "10.0.0.9", user "ana", database "chats", no encryption',
            "The server only accepts encrypted connections.",
        ),
        ("connection timeout expired", "did not answer within 5 seconds"),
        (
            'connection failed: connection to server at "10.0.0.5", port 5432 failed: root certificate '
            'file "/nope.pem" does not exist',
            "The server's certificate could not be checked against the CA file.",
        ),
        (
            'connection failed: connection to server at "10.0.0.5", port 5432 failed: SSL error: '
            "certificate verify failed",
            "The server's certificate could not be checked against the CA file.",
        ),
        ("something nobody foresaw", "Could not connect to db.example.org port 5432."),
    ],
)
def test_driver_texts_become_sentences(driver_text: str, expected: str) -> None:
    message = explain_failure(psycopg.OperationalError(driver_text), SERVER)
    assert expected in message
    assert "FATAL" not in message and "pg_hba" not in message and "psycopg" not in message
