"""``python -m gateway --write DIR`` writes the floor's payload schemas; ``--check DIR``
exits 1 when they differ from the models (docs/floor/ is committed)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from gateway.payloads import check_schemas, write_schemas


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gateway", description=__doc__)
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--write", metavar="DIR", help="write the schemas into DIR")
    group.add_argument("--check", metavar="DIR", help="compare DIR with the models")
    args = parser.parse_args(argv)
    if args.write:
        for path in write_schemas(args.write):
            print(path)
        return 0
    problems = check_schemas(args.check)
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
