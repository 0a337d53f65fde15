"""``python -m controller.api --write DIR`` regenerates docs/api/; ``--check DIR`` compares."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from controller.api.messages import api_schemas, schema_text, write_schemas


def main(argv: list[str] | None = None) -> int:
    """``python -m controller.api --write DIR`` regenerates the schema files;
    ``--check DIR`` exits 1 when they differ from the models."""
    parser = argparse.ArgumentParser(prog="python -m controller.api")
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--write", metavar="DIR", help="write the JSON schemas into DIR")
    group.add_argument("--check", metavar="DIR", help="check the JSON schemas in DIR")
    args = parser.parse_args(argv)
    if args.write:
        for path in write_schemas(args.write):
            print(path)
        return 0
    stale = []
    directory = Path(args.check)
    expected = api_schemas()
    for name, schema in expected.items():
        path = directory / name
        if not path.is_file() or path.read_text(encoding="utf-8") != schema_text(schema):
            stale.append(name)
    stale += [p.name for p in directory.glob("*.json") if p.name not in expected]
    for name in sorted(stale):
        print(f"{directory / name}: differs from the models", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
