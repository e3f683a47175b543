"""Alembic environment for advisor's tables (all prefixed ``advisor_``).

advisor passes an open connection in ``config.attributes["connection"]`` (see
`advisor.db.schema`). From the alembic command line, ``-x db=URL`` (or ``$ADVISOR_DB_URL``) names
the database instead. Only ``advisor_*`` tables are compared or touched: Optuna's tables share
the database and keep their own ``alembic_version``.
"""

from __future__ import annotations

from typing import Any

from alembic import context

from advisor.db.engine import make_engine, parse_url, resolve_url
from advisor.db.models import Base
from advisor.db.schema import TABLE_PREFIX, VERSION_TABLE


def include_name(name: str | None, type_: str, _parents: dict[str, Any]) -> bool:
    if type_ == "table":
        return bool(name and name.startswith(TABLE_PREFIX))
    return True


def _options() -> dict[str, Any]:
    return {
        "target_metadata": Base.metadata,
        "version_table": VERSION_TABLE,
        "render_as_batch": True,
        "include_name": include_name,
        "compare_type": True,
    }


def run_offline() -> None:
    url = resolve_url(context.get_x_argument(as_dictionary=True).get("db"))
    context.configure(url=parse_url(url), literal_binds=True, **_options())
    with context.begin_transaction():
        context.run_migrations()


def run_online() -> None:
    connection = context.config.attributes.get("connection")
    if connection is not None:
        context.configure(connection=connection, **_options())
        with context.begin_transaction():
            context.run_migrations()
        return
    url = resolve_url(context.get_x_argument(as_dictionary=True).get("db"))
    engine = make_engine(parse_url(url))
    with engine.connect() as own:
        context.configure(connection=own, **_options())
        with context.begin_transaction():
            context.run_migrations()
    engine.dispose()


if context.is_offline_mode():
    run_offline()
else:
    run_online()
