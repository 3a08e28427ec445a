"""Every option of every command is explained twice: in ``--help``, and in a user page.

The whole command tree of ``spanscore`` is walked (nested groups such as ``review``, ``judge`` and
``train`` included). For each command:

- every option has help text (arguments are described in the command's own help instead);
- every option's long name (``--no-per-type``, ``--keep-types``...) is mentioned in a user page:
  README.md or docs/*.md, the development pages excepted. A mention is the option in backticks
  (`` `--labels bioes` ``, a table cell) or in a command example: a fenced block other than
  Python (``console``, ``bash``, ``text`` synopses and the like). One mention anywhere covers
  every command that has the option.

Each test lists every (command, option) at fault in one failure, so that all can be fixed at once.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import click

from spanscore.cli.main import cli

ROOT = Path(__file__).resolve().parent.parent
# Pages for developers, not users: an option named only there is undocumented for users.
DEVELOPMENT_PAGES = {"architecture.md", "contributing.md"}
USER_PAGES = [ROOT / "README.md"] + [
    page for page in sorted((ROOT / "docs").glob("*.md")) if page.name not in DEVELOPMENT_PAGES
]
# Options every command has and that explain themselves. Nothing else is exempt.
EXEMPT = {"--help"}

FENCE = re.compile(r"^```\s*(\w*)")
BACKTICKS = re.compile(r"`+([^`\n]+?)`+")


def commands(group: click.Group, ctx: click.Context, path: str = "spanscore") -> Iterator[tuple[str, click.Command]]:
    """Every command under ``group``, subgroups and their commands included, with its full name."""
    for name in group.list_commands(ctx):  # the root group loads its commands lazily: ask it
        command = group.get_command(ctx, name)
        assert command is not None, f"{path} {name} is listed but cannot be loaded"
        yield f"{path} {name}", command
        if isinstance(command, click.Group):
            yield from commands(command, click.Context(command, info_name=name, parent=ctx), f"{path} {name}")


def tree() -> list[tuple[str, click.Command]]:
    ctx = click.Context(cli, info_name="spanscore")
    return [("spanscore", cli), *commands(cli, ctx)]


def options(command: click.Command) -> list[click.Option]:
    ctx = click.Context(command)
    return [
        p
        for p in command.get_params(ctx)
        if isinstance(p, click.Option) and not p.hidden and long_name(p) not in EXEMPT
    ]


def long_names(option: click.Option) -> list[str]:
    return [name for name in (*option.opts, *option.secondary_opts) if name.startswith("--")]


def long_name(option: click.Option) -> str:
    names = long_names(option)
    return names[0] if names else option.opts[0]


def mentions(page: Path) -> str:
    """The text of a page that can mention an option: backtick spans and command blocks."""
    found: list[str] = []
    prose: list[str] = []
    fence: str | None = None
    for line in page.read_text(encoding="utf-8").splitlines():
        opened = FENCE.match(line)
        if fence is None and opened:
            fence = opened.group(1).lower()
        elif fence is not None and line.startswith("```"):
            fence = None
        elif fence is None:
            prose.append(line)
        elif fence != "python":
            found.append(line)
    # Backtick spans may wrap onto the next line in a paragraph: join lines before matching.
    text = "\n".join(prose)
    found += [m.group(1) for m in BACKTICKS.finditer(text.replace("\n", " "))]
    return "\n".join(found)


def mentioned(name: str, text: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text) is not None


def test_the_walk_reaches_every_command() -> None:
    names = [name for name, _ in tree()]
    for expected in ("spanscore evaluate", "spanscore review create", "spanscore judge train", "spanscore train crf"):
        assert expected in names, names
    assert sum(len(options(command)) for _, command in tree()) > 100


def test_every_option_has_help() -> None:
    missing = [
        f"{path} {'/'.join(option.opts)}"
        for path, command in tree()
        for option in options(command)
        if not (option.help or "").strip()
    ]
    assert not missing, f"{len(missing)} options without help= text:\n  " + "\n  ".join(missing)


def test_every_option_is_mentioned_in_a_user_page() -> None:
    text = "\n".join(mentions(page) for page in USER_PAGES)
    missing = [
        f"{path} {long_name(option)}"
        for path, command in tree()
        for option in options(command)
        if not any(mentioned(name, text) for name in long_names(option) or option.opts)
    ]
    assert not missing, (
        f"{len(missing)} options that no user page (README.md, docs/*.md but "
        f"{', '.join(sorted(DEVELOPMENT_PAGES))}) mentions in backticks or in a command example:\n  "
        + "\n  ".join(missing)
    )
