"""``aurane inspect``: the parsed AST as a summary, in full, as statistics or exported JSON."""

from __future__ import annotations

import argparse
import json
from typing import Any

from aurane.cli.commands import command_help
from aurane.cli.common import (
    EXIT_INPUT,
    EXIT_OK,
    STDOUT,
    check_output,
    load_text,
    print_diagnostics,
    write_output,
)


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = sub.add_parser(
        "inspect",
        help=command_help("inspect"),
        description="Show the program's statements; --verbose prints the whole AST, --stats "
        "counts constructs, --export FILE writes the AST as JSON.",
    )
    parser.add_argument("source", metavar="SRC", help="the .aur file")
    parser.add_argument("--verbose", action="store_true", help="print the full AST")
    parser.add_argument("--stats", action="store_true", help="print counts of constructs")
    parser.add_argument(
        "--export", metavar="FILE", help="write the AST as JSON to FILE ('-': stdout)"
    )
    parser.set_defaults(run=run)


def _summary(program: Any) -> list[str]:
    from aurane.syntax import ast

    lines = []
    for stmt in program.statements:
        where = f"{stmt.span.line}:{stmt.span.column}"
        match stmt:
            case ast.Use():
                lines.append(
                    f"{where}  use {stmt.module}" + (f" as {stmt.alias}" if stmt.alias else "")
                )
            case ast.Constant():
                lines.append(f"{where}  constant {stmt.name}")
            case ast.Experiment():
                lines.append(
                    f"{where}  experiment {stmt.name} ({_count(len(stmt.fields), 'field')})"
                )
            case ast.Dataset():
                src = f" from {stmt.source.id}" if stmt.source else ""
                lines.append(
                    f"{where}  dataset {stmt.name}{src} ({_count(len(stmt.fields), 'field')})"
                )
            case ast.Model():
                body = len(stmt.forward.body) if stmt.forward else 0
                lines.append(
                    f"{where}  model {stmt.name} ({_count(len(stmt.fields), 'field')}, "
                    f"{_count(body, 'forward statement')})"
                )
            case ast.Train():
                lines.append(f"{where}  train {stmt.model.id} on {stmt.dataset.id}")
            case ast.TrainGan():
                lines.append(
                    f"{where}  train_gan {stmt.generator.id} and "
                    f"{stmt.discriminator.id} on {stmt.dataset.id}"
                )
    return lines


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def _stats(program: Any, text: str) -> dict[str, int]:
    from aurane.syntax import ast

    steps = 0
    for model in program.models:
        for stmt in ast.simple_statements(model.forward.body) if model.forward else ():
            steps += _count_calls(stmt)  # as written: a loop's body counts once
    return {
        "lines": len(text.splitlines()),
        "statements": len(program.statements),
        "constants": len(program.constants),
        "models": len(program.models),
        "datasets": len(program.datasets),
        "operations": steps,
        "train_jobs": sum(isinstance(s, ast.Train | ast.TrainGan) for s in program.statements),
        "comments": len(program.comments),
    }


def _count_calls(node: Any) -> int:
    from aurane.syntax import ast

    match node:
        case ast.Call():
            return 1 + len(node.suffixes) + sum(_count_calls(a) for a in node.args)
        case ast.Chain():
            return _count_calls(node.source) + sum(_count_calls(s) for s in node.steps)
        case ast.Assign() | ast.Return():
            return _count_calls(node.value)
        case ast.ChainStmt():
            return _count_calls(node.chain)
    return 0


def run(args: argparse.Namespace) -> int:
    from aurane.syntax.parser import parse_program
    from aurane.syntax.printer import dump_ast

    if args.export:  # before any work: a FIFO, a device or the source is never opened
        check_output(args.export, args.source)
    text = load_text(args.source)
    if text is None:
        return EXIT_INPUT
    program, diagnostics = parse_program(text, args.source)
    print_diagnostics(diagnostics, text, args.source)
    if program is None or any(d.is_error for d in diagnostics):
        return EXIT_INPUT
    if args.export:
        write_output(
            args.export, json.dumps(dump_ast(program), indent=2, ensure_ascii=False) + "\n"
        )
        if args.export != STDOUT:
            print(f"wrote {args.export}")
    if args.stats:
        for key, value in _stats(program, text).items():
            print(f"{key:<12} {value}")
    if args.verbose:
        print(json.dumps(dump_ast(program), indent=2, ensure_ascii=False))
    elif not args.stats and not args.export:
        print("\n".join(_summary(program)))
    return EXIT_OK
