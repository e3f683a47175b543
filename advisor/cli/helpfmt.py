"""`--help`, readable at 80 columns: each panel (typer's ``rich_help_panel``) a two-column
table whose option column is as narrow as its names (``--[no-]warm``, ``--trials N``: a flag
shows no type) and whose help column takes the rest, wrapped between words, defaults in full.

Used by every command and group (`advisor.cli.app.AdvisorCommand`, `AdvisorGroup`) in place of
typer's own rich help, whose option table at 80 columns left the help 19 characters and cut
defaults and long words with an ellipsis.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.padding import Padding
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

NAME_MAX = 30  # the option column at most; a longer name wraps in it
ARGUMENTS, OPTIONS, COMMANDS = "Arguments", "Options", "Commands"
METAVARS = {"int": "N", "float": "X", "str": "TEXT", "path": "PATH"}  # by typer's type name


def _console() -> Console:
    import os

    width = os.environ.get("TERMINAL_WIDTH")  # typer's own setting, honoured as it does
    return Console(highlight=False, width=int(width) if width else None)


def _paragraphs(text: str | None) -> str:
    """A docstring or help text as typer shows it: single line breaks joined, paragraphs
    kept (a ``\\b`` paragraph as written)."""
    import inspect

    out = []
    for block in inspect.cleandoc(text or "").split("\n\n"):
        out.append(block.strip("\b\n") if block.startswith("\b") else " ".join(block.split()))
    return "\n".join(p for p in out if p)


def first_paragraph(text: str | None) -> str:
    return _paragraphs(text).split("\n")[0] if text else ""


def _argument(param: Any) -> bool:
    return getattr(param, "param_type_name", "") == "argument"


def metavar(param: Any, ctx: Any) -> str:
    """``N``, ``X``, ``PATH``, ``TEXT`` (from typer's ``<int>``, ``<list[str]>``, ...); the
    option's own metavar where it has one."""
    if param.metavar:
        return str(param.metavar)
    name = str(param.display_type(ctx) or "text").strip("<>")
    if name.startswith("list[") and name.endswith("]"):
        name = name[5:-1]
    return METAVARS.get(name.lower(), name.upper())


def param_name(param: Any, ctx: Any) -> str:
    """``FILES...`` (an argument), ``--trials N``, ``-v, --verbose``, ``--[no-]warm``."""
    if _argument(param):
        name = str(param.metavar or param.name or "").upper()
        return name + ("..." if param.nargs != 1 else "")
    longs = [o for o in param.opts if o.startswith("--")]
    shorts = [o for o in param.opts if not o.startswith("--")]
    flag = bool(getattr(param, "is_flag", False))
    negatives = list(param.secondary_opts)
    if flag and longs and negatives == [f"--no-{longs[0][2:]}"]:
        text = ", ".join([*shorts, f"--[no-]{longs[0][2:]}"])
    else:
        text = ", ".join([*shorts, *longs, *negatives])
    return text if flag else f"{text} {metavar(param, ctx)}"


def _default(param: Any, ctx: Any) -> str:
    """``[default: 900.0]``; ``[default: on]`` for a ``--x/--no-x`` flag on by default;
    nothing where the default says nothing (none, off, empty) or the option hides it."""
    if _argument(param) or param.show_default is False:
        return ""
    if isinstance(param.show_default, str):
        return f"[default: {param.show_default}]"
    value = param.get_default(ctx, call=False)
    if param.is_flag:
        return "[default: on]" if value and param.secondary_opts else ""
    if value is None or value == "" or value is False or (
            isinstance(value, (list, tuple)) and not value) or callable(value):
        return ""
    if isinstance(value, (list, tuple)):
        value = ", ".join(str(v) for v in value)
    return f"[default: {getattr(value, 'value', value)}]"


def _help(param: Any, ctx: Any) -> Text:
    text = Text(_paragraphs(getattr(param, "help", None)))
    extras = [e for e in (_default(param, ctx),
                          "[required]" if param.required else "") if e]
    if extras:
        if text:
            text.append(" ")
        text.append(" ".join(extras), style="dim")
    return text


def _panel(console: Console, title: str, rows: list[tuple[str, Text]]) -> None:
    if not rows:
        return
    table = Table(box=None, show_header=False, padding=(0, 1), pad_edge=False, expand=True)
    table.add_column(width=min(NAME_MAX, max(len(name) for name, _ in rows)),
                     style="bold cyan", overflow="fold")
    table.add_column(ratio=1, overflow="fold")
    for name, help_text in rows:
        table.add_row(Text(name), help_text)  # Text: ``--[no-]warm`` is no markup
    console.print(Panel(table, title=title, title_align="left", border_style="dim"))


def format_help(command: Any, ctx: Any) -> None:
    """Print ``command``'s help: usage, its text, a panel per help panel (arguments first,
    then options, then commands for a group), the epilog."""
    console = _console()
    group = hasattr(command, "list_commands")
    pieces = ["[OPTIONS]", *(param_name(p, ctx) if p.required else f"[{param_name(p, ctx)}]"
                             for p in command.get_params(ctx) if _argument(p))]
    if group:
        pieces.append("COMMAND [ARGS]...")
    console.print(Padding(Text(f"Usage: {ctx.command_path} {' '.join(pieces)}", style="bold"),
                          (1, 1, 1, 1)))
    if command.help:
        console.print(Padding(Text(_paragraphs(command.help)), (0, 1, 1, 1)))
    panels: dict[str, list[tuple[str, Text]]] = {ARGUMENTS: [], OPTIONS: []}
    for param in command.get_params(ctx):
        if getattr(param, "hidden", False):
            continue
        default = ARGUMENTS if _argument(param) else OPTIONS
        panel = getattr(param, "rich_help_panel", None) or default
        panels.setdefault(panel, []).append((param_name(param, ctx), _help(param, ctx)))
    for title, rows in panels.items():
        _panel(console, title, rows)
    if group:
        commands: dict[str, list[tuple[str, Text]]] = {}
        for name in command.list_commands(ctx):
            sub: Any = command.get_command(ctx, name)
            if sub is None or sub.hidden:
                continue
            panel = getattr(sub, "rich_help_panel", None) or COMMANDS
            commands.setdefault(panel, []).append((name, Text(first_paragraph(sub.help))))
        for title, rows in commands.items():
            _panel(console, title, rows)
    if command.epilog:
        console.print(Padding(Text(_paragraphs(command.epilog)), 1))
