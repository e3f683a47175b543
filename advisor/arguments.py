"""Errors raised through the Python API name Python arguments, not the CLI's flags.

The library's checks are shared by the CLI and the Python API, and say what is wrong in the
CLI's words (``--fingerprint 'x' names 2 devices``). Called from Python, `python_arguments`
rewrites each flag it is given into the argument it stands for (``fingerprint='x' names 2
devices``); a command in backticks (one to run) stays as written.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator, Mapping

from advisor.errors import ConfigError

# a flag, and a value after it: quoted, a number, or a placeholder (``--calls-per-process N``)
_FLAG = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]*)( (?=['\"0-9]|-[0-9]|[A-Z]+\b))?")


@contextlib.contextmanager
def python_arguments(names: Mapping[str, str]) -> Iterator[None]:
    """Errors raised inside name the Python arguments, not the CLI's flags: each flag of
    ``names`` (``--fingerprint``) outside backticks becomes its argument (``fingerprint=``, its
    value joined to it: ``fingerprint='x'``; a name without ``=``, such as ``confirm=True``,
    stands alone). Only a ConfigError's text is rewritten."""
    try:
        yield
    except ConfigError as e:
        new = pythonic(str(e), names)
        if new == str(e) or type(e) is not ConfigError:
            raise
        raise ConfigError(new) from e


def pythonic(text: str, names: Mapping[str, str]) -> str:
    """``text`` with each flag of ``names`` outside backticks written as its argument."""
    parts = re.split(r"(`[^`]*`)", text)
    return "".join(p if p.startswith("`") else _FLAG.sub(lambda m: _argument(m, names), p)
                   for p in parts)


def _argument(match: re.Match[str], names: Mapping[str, str]) -> str:
    """``--fingerprint 'x'`` -> ``fingerprint='x'``; an unknown flag stays as it is."""
    flag, space = match.group(1), match.group(2) or ""
    name = names.get(flag)
    if name is None:
        return flag + space
    return name if name.endswith("=") else name + space
