"""Deterministic offline datasets, usable as ``from`` sources in ``.aur`` programs
(``from aurane.data.SyntheticImages``).

The classes live in :mod:`aurane.runtime.data`, so ``aurane compile --standalone`` copies
them into a program like the rest of the runtime (a standalone program imports nothing of
Aurane); this module is the name programs and users write. It needs torch; ``import
aurane`` never imports it.

``python -m aurane.data prepare-tokens TEXT... --tokenizer tokenizer.json --out train.bin``
tokenizes text files into the token file ``TokenFile`` reads (``prepare_tokens``).
"""

from __future__ import annotations

import sys

from aurane.runtime.data import (
    HFDataset,
    Shards,
    SyntheticDenoising,
    SyntheticImages,
    SyntheticMaskedText,
    SyntheticRegression,
    SyntheticSegmentation,
    SyntheticTokens,
    Table,
    TokenFile,
    prepare_tokens,
)

__all__ = [
    "HFDataset",
    "Shards",
    "SyntheticDenoising",
    "SyntheticImages",
    "SyntheticMaskedText",
    "SyntheticRegression",
    "SyntheticSegmentation",
    "SyntheticTokens",
    "Table",
    "TokenFile",
    "prepare_tokens",
]


def main(argv: list[str] | None = None) -> int:
    """``python -m aurane.data prepare-tokens``: text files -> a token file and its sidecar."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m aurane.data")
    commands = parser.add_subparsers(dest="command", required=True)
    prepare = commands.add_parser("prepare-tokens", help="tokenize text into a token file")
    prepare.add_argument("texts", nargs="+", help="UTF-8 text files, in order")
    prepare.add_argument(
        "--tokenizer",
        required=True,
        help="a Hugging Face tokenizer.json, or tiktoken:NAME (e.g. tiktoken:gpt2)",
    )
    prepare.add_argument("--out", required=True, help="the token file to write (.bin)")
    args = parser.parse_args(argv)
    try:
        meta = prepare_tokens(args.texts, args.tokenizer, args.out)
    except Exception as error:  # noqa: BLE001 (tokenizers raises its own types): one line, no traceback
        print(f"error: {error}", file=sys.stderr)
        return 1
    print(
        f"wrote {meta['tokens']} {meta['dtype']} tokens (vocab {meta['vocab_size']}) to {args.out}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
