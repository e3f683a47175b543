"""One masking function for every message that shows a database URL: passwords in the
authority (a raw `@` inside them too), secret query parameters, URLs without `//`."""

from __future__ import annotations

import os

import pytest
from reliability_support import advisor
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from advisor.db import ResultStore, display_url, masked_url
from advisor.errors import StoreError

SECRET = "Zq9-s3cr3t"


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        (f"postgresql+psycopg://bob:{SECRET}@db:5432/r", "postgresql+psycopg://bob:***@db:5432/r"),
        (f"postgresql://bob@h/d?password={SECRET}&sslmode=require",
         "postgresql://bob@h/d?password=***&sslmode=require"),
        (f"postgresql://h/d?sslmode=require&PASSWORD={SECRET}",
         "postgresql://h/d?sslmode=require&PASSWORD=***"),
        (f"postgresql://h/d?sslpassword={SECRET}", "postgresql://h/d?sslpassword=***"),
        (f"postgresql://bob:p@{SECRET}@h/d", "postgresql://bob:***@h/d"),
        (f"postgresql://bob:{SECRET}@x@h:5/d", "postgresql://bob:***@h:5/d"),
        (f"postgresql://bob:a/{SECRET}@h/d", "postgresql://bob:***@h/d"),
        (f"postgresql:bob:{SECRET}@h/d", "postgresql:***"),
        (f"postgres:{SECRET}", "postgres:***"),
        ("sqlite:///advisor.db", "sqlite:///advisor.db"),
        ("sqlite:////tmp/a b/x.db", "sqlite:////tmp/a b/x.db"),
        ("postgresql://bob@h/d", "postgresql://bob@h/d"),
        ("advisor.db", "advisor.db"),
    ],
)
def test_masked_url(url: str, shown: str) -> None:
    assert masked_url(url) == shown
    assert SECRET not in display_url(url)
    try:
        parsed = make_url(url)
    except ArgumentError:  # a URL SQLAlchemy cannot parse has no URL object
        return
    assert SECRET not in masked_url(parsed)


@pytest.mark.parametrize(
    "url",
    [
        f"postgresql://bob:p@{SECRET}@127.0.0.1:1/results",
        f"postgresql://bob@127.0.0.1:1/results?password={SECRET}",
        f"postgresql:bob:{SECRET}@127.0.0.1:1/results",
        f"mysql://bob:p@{SECRET}@localhost/results",
    ],
)
def test_connection_errors_and_every_command_mask_the_url(url: str) -> None:
    with pytest.raises(StoreError) as refused:
        ResultStore.from_url(url)
    assert SECRET not in str(refused.value)
    for command in (("db", "current"), ("db", "upgrade"), ("list",), ("show", "1"),
                    ("recommend", "w"), ("export",), ("import", "-")):
        code, out, err = advisor(*command, "--db", url)
        assert code == 2, (command, out, err)
        assert SECRET not in out + err, (command, err)


@pytest.mark.postgres
def test_messages_of_a_reachable_database_mask_its_secret_parameters(pg_scratch: str) -> None:
    # the server trusts the client: the password parameter is sent and ignored, and must not show
    url = f"{pg_scratch}?password={SECRET}"
    done = [advisor(*c, "--db", url) for c in (("db", "current"), ("list",), ("show", "999"))]
    assert done[0][0] == 0 and "password=***" in done[0][1]
    assert done[2][0] == 2 and "password=***" in done[2][2]
    for _, out, err in done:
        assert SECRET not in out + err
    with ResultStore.from_url(url) as store:
        assert SECRET not in store.masked_url and SECRET not in repr(store)


@pytest.mark.slow
@pytest.mark.postgres
def test_doctor_masks_the_url(pg_scratch: str) -> None:
    code, out, err = advisor("doctor", "--db", f"{pg_scratch}?password={SECRET}", "--device",
                             "cpu")
    assert "password=***" in out, out + err
    assert SECRET not in out + err


def test_pg_url_env_is_not_printed_by_accident() -> None:
    server = os.environ.get("ADVISOR_TEST_PG_URL")
    if server and make_url(server).password:
        assert make_url(server).password not in masked_url(server)
