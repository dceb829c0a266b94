"""How often a block definition is still generated as more than one class (issue 24 item 3).

Over the random programs of the differential campaign (``aurane.tools.fuzz``), every
program ``check`` accepts is compiled, and each block it defines is counted by the classes
the generated file has for it (``Stage``, ``Stage_2``, ...). Prints the share of blocks
written as one class, the blocks written as several with the program's seed, and the
located reasons the rollers gave (``TorchCodeGenerator.roll_fallbacks``, what ``aurane
compile`` prints as notes), each with the seed of its first program. A block called once
(or always alike) is one class whatever the rollers do, so the share that matters is the
one among the blocks called at two or more distinct sets of arguments and input shapes
(read from the IR's block calls, nested ones included): it is printed on its own line.
Not a speed benchmark: no timing is compared.

    python bench/one_class_per_block.py --programs 2000 --seed 1
"""

from __future__ import annotations

import argparse
import re
from collections import Counter

from aurane.backends.torch import TorchCodeGenerator
from aurane.compile import prepare_program
from aurane.stages import CompilationError
from aurane.tools.fuzz import generate
from aurane.tools.roll_check import block_call_sets

MODEL = re.compile(r"^model (\w+)\s*[(:]", re.MULTILINE)
CLASS = re.compile(r"^class (\w+?)(?:_(\d+))?\(", re.MULTILINE)


def classes_per_block(source: str, code: str) -> dict[str, int]:
    """Each block the source defines (variants excluded) -> the classes generated for it."""
    blocks = set(MODEL.findall(source))
    counts: Counter[str] = Counter()
    for name, _ in CLASS.findall(code):
        if name in blocks:
            counts[name] += 1
    return dict(counts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--programs", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    blocks = split = accepted = 0
    varied = varied_split = 0  # blocks called at 2+ distinct argument and shape sets
    reasons: Counter[str] = Counter()
    first_seed: dict[str, int] = {}
    examples: list[str] = []
    crashes: list[str] = []
    for seed in range(args.seed * 10**6, args.seed * 10**6 + args.programs):
        source = generate(seed).text
        try:
            program, graphs, _ = prepare_program(source, filename=f"seed{seed}.aur")
        except CompilationError:
            continue
        accepted += 1
        try:
            generator = TorchCodeGenerator(program, graphs)  # it plans the classes already
            code = generator.generate()
        except Exception as error:  # a generator crash is a finding, not the end of the run
            crashes.append(f"seed {seed}: {type(error).__name__}: {error}")
            continue
        sets = block_call_sets(graphs)
        noted = {fallback.name for fallback in generator.roll_fallbacks}
        for name, count in classes_per_block(source, code).items():
            if name == "Net":
                continue
            blocks += 1
            several = len(sets.get(name, ())) > 1
            varied += several
            if count > 1:
                split += 1
                varied_split += several
                # a split with no located note is a finding of its own: the user is not told
                unnoted = "" if name in noted else " (no located note)"
                examples.append(f"seed {seed}: {name} x{count}{unnoted}")
        for fallback in generator.roll_fallbacks:
            reason = re.sub(r"^\w+ '\w+' at \d+:\d+: ", "", str(fallback))
            kind = re.sub(r"'.*'", "'...'", reason)  # one row per kind of reason
            reasons[kind] += 1
            first_seed.setdefault(kind, seed)
    print(f"programs {args.programs}, accepted {accepted}, blocks {blocks}")
    share = 100 * (blocks - split) / blocks if blocks else 100.0
    print(f"blocks written as one class: {blocks - split} of {blocks} ({share:.1f}%)")
    share = 100 * (varied - varied_split) / varied if varied else 100.0
    print(
        f"blocks called at 2+ distinct argument/shape sets: {varied}; written as one class: "
        f"{varied - varied_split} of {varied} ({share:.1f}%)"
    )
    print(f"blocks written as several classes: {split}")
    for line in examples[:20]:
        print("  " + line)
    print(f"generator crashes: {len(crashes)}")
    for line in crashes[:20]:
        print("  " + line)
    print("roller fallbacks by reason:")
    for reason, count in reasons.most_common(25):
        print(f"  {count:4d}  {reason}  (e.g. seed {first_seed[reason]})")


if __name__ == "__main__":
    main()
