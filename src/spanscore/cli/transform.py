"""``spanscore transform``."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ..errors import InputError, OptionError
from ..io.files import write_atomic
from ..io.reading import Reading
from .options import parse_type_map, parse_types, reading_options


@click.command("transform", short_help="Rewrite labels: merge at @-mentions, filter, map types.")
@click.argument("source", type=click.Path(dir_okay=False, allow_dash=True, path_type=Path))
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False, allow_dash=True, path_type=Path),
              help="Where to write the result (- for stdout; may be SOURCE itself).")
@click.option("--merge-at-mentions", is_flag=True,
              help="BTC correction: an @ tagged B-X followed by a B-X token becomes one mention (B-X I-X).")
@click.option("--type-map", help="Rename types: OLD=NEW,... or a file of OLD<TAB>NEW lines (NEW=O drops).")
@click.option("--keep-types", help="Keep only these types (comma-separated), after --type-map; others become O.")
@click.option("--remove-types", help="Turn these types (comma-separated) into O, after --type-map.")
@reading_options(repair=False)
def transform_command(
    source: Path,
    output: Path,
    merge_at_mentions: bool,
    type_map: str | None,
    keep_types: str | None,
    remove_types: str | None,
    reading: Reading,
) -> None:
    """Rewrite the label column of SOURCE; every other byte is copied as it is."""
    from ..programs.transform import transform_bytes  # here: --help answers without numpy

    if not (merge_at_mentions or type_map or keep_types or remove_types):
        raise OptionError("nothing to do: give --merge-at-mentions, --type-map, --keep-types or --remove-types")
    data = sys.stdin.buffer.read() if str(source) == "-" else _read(source)
    result = transform_bytes(
        data,
        path=str(source),
        merge_at_mentions=merge_at_mentions,
        type_map=parse_type_map(type_map),
        keep_types=parse_types(keep_types),
        remove_types=parse_types(remove_types),
        reading=reading,
    )
    if str(output) == "-":
        sys.stdout.buffer.write(result.data)
        sys.stdout.buffer.flush()
    else:
        write_atomic(output, result.data)
    parts = []
    if merge_at_mentions:
        parts.append(f"merged {result.merged} @-mention{'s' if result.merged != 1 else ''}")
    if type_map:
        parts.append(f"renamed {result.renamed} labels")
    if keep_types or remove_types:
        parts.append(f"removed {result.removed} labels")
    parts.append(f"{result.changed} of {result.tokens} token lines changed")
    where = "stdout" if str(output) == "-" else str(output)
    click.echo(f"{source}: {'; '.join(parts)}; wrote {where}", err=True)


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise InputError("no such file", path=str(path)) from None
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", path=str(path)) from None


commands = [transform_command]
