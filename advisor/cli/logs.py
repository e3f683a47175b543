"""The `advisor` command's log handler: the library configures none (its modules log to
`logging.getLogger(__name__)`, under "advisor"); the command writes those lines to stderr at
`-v` (DEBUG) or at $ADVISOR_LOG_LEVEL, and nothing otherwise, so what it prints is unchanged."""

from __future__ import annotations

import logging
import sys

from advisor import settings
from advisor.errors import ConfigError

FORMAT = "%(asctime)s %(levelname)s %(name)s[%(process)d]: %(message)s"
_handler: logging.Handler | None = None


def configure(verbose: bool) -> None:
    """Log to stderr at DEBUG (`verbose`) or $ADVISOR_LOG_LEVEL; with neither, log nothing.
    `-v` is handed on to the processes this one starts (a sweep's workers), through
    $ADVISOR_LOG_LEVEL. Called once per command; calling it again replaces its handler."""
    global _handler
    logger = logging.getLogger("advisor")
    if _handler is not None:
        logger.removeHandler(_handler)
        logger.setLevel(logging.NOTSET)
        _handler = None
    level = "DEBUG" if verbose else settings.log_level()
    if level is None:
        return
    if not isinstance(logging.getLevelName(level), int):
        raise ConfigError(f"{settings.LOG_LEVEL.name}={level!r} is not a log level: "
                          "use DEBUG, INFO, WARNING or ERROR")
    if verbose:
        settings.hand_on(settings.LOG_LEVEL, level)
    _handler = logging.StreamHandler(sys.stderr)
    _handler.setFormatter(logging.Formatter(FORMAT))
    logger.addHandler(_handler)
    logger.setLevel(level)
