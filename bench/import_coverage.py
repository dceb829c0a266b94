"""Coverage of ``aurane import`` (issue 26): every classification builder of
``torchvision.models`` and Hugging Face ``BertModel``, ``GPT2LMHeadModel`` and
``LlamaForCausalLM`` at small configurations, lifted and checked.

    nice -n 10 .venv/bin/python bench/import_coverage.py [--only NAME ...] [--out DIR]

Per model: exact or not (and why: the first gap or the check's verdict), the imported
program's code lines against the original's, and the import time. The models and inputs
are ``tests/lift/cases.py``'s (CI-sized inputs: 32x32 for most, 75x75 for Inception v3;
token sequences of 8), including the builders CI leaves out (``vit_h_14``,
``regnet_y_128gf``, MaxViT). Weights are seeded random values (``tests/lift/models.py``).

- *.aur lines*: code lines of the imported program (not blank, not only a comment), the
  rule of docs/zoo.md's table (``tests/zoo/zoo_table.py``).
- *original lines*: code lines (docstrings and comments left out) of every class the model
  is made of outside ``torch`` (the model class, its blocks, torchvision's
  ``Conv2dNormActivation``...): the Python a person reads to know the model. Free
  functions the classes call are not counted.
- *import s*: wall time of ``lift_module`` (trace, observe, lower, rebuild, write, compile
  and check), the model already built; CPU time beside it (the machine is shared).

Writes ``DIR/import_coverage.md`` (the table of docs/import.md) and ``.json``.
"""

from __future__ import annotations

import argparse
import gc
import inspect
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
for path in (REPO, REPO / "src"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch  # noqa: E402
from tests.lift.cases import Case, build_case, huggingface_cases, torchvision_cases  # noqa: E402
from tests.zoo.zoo_table import code_lines  # noqa: E402
from torch import nn  # noqa: E402

from aurane.lift.graph import summarize  # noqa: E402
from aurane.lift.pipeline import ImportResult, lift_module  # noqa: E402


def original_lines(model: nn.Module) -> int:
    classes = {type(m) for m in model.modules()}
    total = 0
    for cls in sorted(classes, key=lambda c: f"{c.__module__}.{c.__qualname__}"):
        if cls.__module__.split(".")[0] == "torch":
            continue
        try:
            total += code_lines(inspect.getsource(cls), python=True)
        except (OSError, TypeError):
            continue
    return total


def why(result: ImportResult) -> str:
    if result.failure is not None:
        return result.failure.message
    if result.gaps:
        gap, count = summarize(result.gaps)[0]
        more = f" (+{len(result.gaps) - 1} more)" if len(result.gaps) > 1 else ""
        return f"`{gap.what}`: {gap.why}{more}"
    if result.check is not None and not result.check.exact:
        return result.check.problem or "not exact"
    return ""


def run_case(case: Case) -> dict[str, Any]:
    model, recorder = build_case(case)
    wall, cpu = time.perf_counter(), time.process_time()
    result = lift_module(
        model,
        input_shape=case.input_shape,
        input_dtype=case.input_dtype,
        constructors=recorder.arguments,
    )
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    row = {
        "model": case.name,
        "spec": case.spec,
        "input": list(case.input_shape),
        "ci": case.ci,
        "exact": result.exact,
        "why": why(result),
        "aur_lines": code_lines(result.text, python=False) if result.text else 0,
        "original_lines": original_lines(model),
        "parameters": sum(p.numel() for p in model.parameters()),
        "seconds": round(wall, 2),
        "cpu_seconds": round(cpu, 2),
        "tracer": result.tracer,
        "phases": {k: round(v, 2) for k, v in result.phases.items()},
    }
    del model, recorder, result
    gc.collect()
    return row


def _count(parameters: int) -> str:
    return f"{parameters / 1e6:.1f}M" if parameters >= 1e6 else f"{parameters / 1e3:.0f}K"


def table(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| model | exact | .aur lines | original lines | ratio | parameters | import s (cpu) | CI | why not exact |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for row in rows:
        ratio = f"{row['aur_lines'] / row['original_lines']:.2f}" if row["aur_lines"] else "-"
        lines.append(
            f"| `{row['model']}` | {'yes' if row['exact'] else '**no**'} | "
            f"{row['aur_lines'] or '-'} | {row['original_lines']} | {ratio} | "
            f"{_count(row['parameters'])} | {row['seconds']:.1f} ({row['cpu_seconds']:.1f}) | "
            f"{'yes' if row['ci'] else 'no'} | {row['why']} |"
        )
    exact = sum(row["exact"] for row in rows)
    vision = [row for row in rows if row["spec"].startswith("torchvision")]
    lines.append("")
    lines.append(
        f"{exact} of {len(rows)} exact: {sum(r['exact'] for r in vision)} of {len(vision)} "
        f"torchvision classification builders, "
        f"{sum(r['exact'] for r in rows if r not in vision)} of {len(rows) - len(vision)} "
        "Hugging Face models."
    )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="*", metavar="NAME", help="only these models")
    parser.add_argument("--out", default=str(REPO / "bench" / "results"), help="output folder")
    args = parser.parse_args()
    torch.set_num_threads(1)
    cases = torchvision_cases() + huggingface_cases()
    if args.only:
        cases = [c for c in cases if c.name in set(args.only)]
    rows = []
    started = time.perf_counter()
    for case in cases:
        row = run_case(case)
        rows.append(row)
        state = "exact" if row["exact"] else f"NOT exact: {row['why']}"
        print(f"{case.name:22s} {row['seconds']:6.1f}s  {state}", flush=True)
    text = table(rows)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    header = (
        f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} on "
        f"{platform.machine()} ({os.cpu_count()} cores, shared), Python "
        f"{platform.python_version()}, torch {torch.__version__}, one torch thread; "
        f"{time.perf_counter() - started:.0f} s in all.\n\n"
    )
    (out / "import_coverage.md").write_text(header + text, encoding="utf-8")
    (out / "import_coverage.json").write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
    print()
    print(header + text)


if __name__ == "__main__":
    main()
