"""Hostile programs (issue 21; RELIABILITY K-SRC, K-GEN, K-ERR, K-LIM): a deterministic
generator and an in-process judge.

``generate(seed)`` draws one program from a benign training program (a dataset, a model
with a repeated block, a training job) with one or two hostile parts:

- ``from``: adversarial dataset sources (standard-library and package callables with
  file, process, network or unpickling powers, torch's loaders, builtins, dunders), often
  disguised with fullwidth, mathematical or Cyrillic letters, behind random ``use`` lines;
- ``names``: identifiers and field names Python reads differently after NFKC
  (``ﬁle``/``file``, ``ｉmport``, fullwidth keywords) in every role that reaches Python;
- ``numbers``: infinite, huge, zero and negative numbers in every numeric training field,
  every numeric argument of the optimizer, scheduler, loss and callback catalogs, dataset
  fields, operation arguments, shapes, constants, ``dim`` bounds and budgets;
- ``repeats``: huge repeat counts, nested repeats, blocks calling blocks twice, chains of
  blocks thousands deep;
- ``budgets``: budgets at batch 0 or size 0, huge amounts and sizes;
- ``uses``: ``use`` lines whose module or alias is a name the generated program binds.

``judge(program)`` runs the front end and, when it accepts, ``compile`` (with validation),
in this process. A program passes when either the front end rejects it with located
errors (``check`` would exit 1), or it accepts, ``compile`` succeeds, and the generated
Python parses and passes the AST audit of ``tests/security/audit.py`` against the benign
program it came from: it imports nothing the program did not ``use``, and calls, binds and
shadows nothing the benign program does not (K-GEN). An exception out of the compiler
(``aurane`` would exit 123), ``compile`` refusing what ``check`` accepted, and a program
whose drawn part must be refused (an infinite number, a repeat past the limit, a refused
source) being accepted are findings. A hang is caught by the caller's guard.

``python -m tests.fuzz.hostile --programs 20000 --seed 1`` runs a campaign
(docs/fuzzing.md); the CI-sized run is ``tests/fuzz/test_hostile_programs.py``.
"""

from __future__ import annotations

import argparse
import random
import re
import signal
import sys
import time
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from functools import cache

from aurane import CompilationError, compile_source
from aurane.frontend import run_front_end
from aurane.ops.spec import ArgKind
from aurane.semantics import config
from tests.security.audit import problems

KINDS = ("from", "names", "numbers", "repeats", "budgets", "uses")


@dataclass(frozen=True)
class Parts:
    """A training program as parts; ``render`` writes it."""

    use: tuple[str, ...] = ()
    constants: tuple[str, ...] = ("width = 8",)
    dataset: str = "images"
    source: str = "aurane.data.SyntheticImages"
    dataset_fields: tuple[str, ...] = (
        "size = 16",
        "image_size = (1, 4, 4)",
        "num_classes = 2",
        "batch = 4",
        "transforms = [Normalize(mean=0.5, std=0.5)]",
    )
    blocks: tuple[str, ...] = (
        "model Step:\n    input_shape = (8,)\n    def forward(x):\n        x -> dense(8).relu\n",
    )
    model: str = "Net"
    model_fields: tuple[str, ...] = ("input_shape = (1, 4, 4)",)
    param: str = "x"
    tensor: str = "h"
    body: tuple[str, ...] = ("{t} = dense({t}, width).relu", "{t} = {t} -> repeat(Step, 2)")
    train_fields: tuple[str, ...] = (
        "epochs = 1",
        "loss = cross_entropy",
        "optimizer = adam(lr=0.001)",
    )

    def render(self) -> str:
        t, p = self.tensor, self.param
        lines = [*self.use, "experiment E:", "    seed = 0", '    device = "cpu"', *self.constants]
        lines += [f"dataset {self.dataset}:", f"    from {self.source}"]
        lines += [f"    {f}" for f in self.dataset_fields]
        text = "\n".join(lines) + "\n" + "".join(self.blocks)
        model = [f"model {self.model}:", *(f"    {f}" for f in self.model_fields)]
        model += [f"    def forward({p}):", f"        {t} = flatten({p})"]
        model += [f"        {line.format(t=t)}" for line in self.body]
        model += [f"        return dense({t}, 2)"]
        job = [f"train {self.model} on {self.dataset}:", *(f"    {f}" for f in self.train_fields)]
        return text + "\n".join(model + job) + "\n"


@dataclass(frozen=True)
class Program:
    seed: int
    kind: str
    parts: Parts
    note: str  # what is hostile, for a report
    must_refuse: bool = False  # the hostile part can never be compiled safely
    uses: tuple[str, ...] = field(default=())  # modules its use lines import

    @property
    def source(self) -> str:
        return self.parts.render()


# ------------------------------------------------------------------ disguises

_FULLWIDTH = {chr(c): chr(c - 0x21 + 0xFF01) for c in range(0x21, 0x7F) if chr(c).isalnum()}
_BOLD = {chr(ord("a") + i): chr(0x1D41A + i) for i in range(26)}
_CYRILLIC = {"a": "а", "c": "с", "e": "е", "o": "о", "p": "р", "x": "х", "y": "у", "i": "і"}
_LIGATURES = {"fi": "ﬁ", "fl": "ﬂ", "ff": "ﬀ"}


def disguise(name: str, rng: random.Random, *, look_alike: bool = True) -> str:
    """``name`` with some letters replaced: NFKC-equal (fullwidth, bold, ligatures) or,
    with ``look_alike``, merely similar (Cyrillic)."""
    styles = ["fullwidth", "bold", "ligature", "partial"] + (["cyrillic"] if look_alike else [])
    style = rng.choice(styles)
    if style == "ligature" and any(pair in name for pair in _LIGATURES):
        pair = next(p for p in _LIGATURES if p in name)
        return name.replace(pair, _LIGATURES[pair], 1)
    table = {"fullwidth": _FULLWIDTH, "bold": _BOLD, "cyrillic": _CYRILLIC}.get(style, _FULLWIDTH)
    chars = list(name)
    spots = [i for i, ch in enumerate(chars) if ch in table]
    if not spots:
        return name
    chosen = spots if style in ("fullwidth", "bold") else rng.sample(spots, 1)
    for i in chosen:
        chars[i] = table[chars[i]]
    return "".join(chars)


# ------------------------------------------------------------------ from lines

STDLIB_POWERS = [
    "os.system",
    "os.popen",
    "os.execv",
    "os.remove",
    "os.fork",
    "posix.system",
    "nt.system",
    "subprocess.run",
    "subprocess.Popen",
    "subprocess.check_output",
    "pty.spawn",
    "socket.socket",
    "socket.create_connection",
    "urllib.request.urlopen",
    "http.client.HTTPSConnection",
    "ftplib.FTP",
    "smtplib.SMTP",
    "shutil.rmtree",
    "shutil.copyfile",
    "tempfile.mkstemp",
    "pathlib.Path",
    "io.open",
    "codecs.open",
    "shelve.open",
    "pickle.load",
    "pickle.loads",
    "marshal.loads",
    "ctypes.CDLL",
    "multiprocessing.Process",
    "runpy.run_path",
    "importlib.import_module",
    "webbrowser.open",
    "asyncio.create_subprocess_shell",
    "zipfile.ZipFile",
    "tarfile.open",
    "sqlite3.connect",
    "code.interact",
    "pdb.run",
    "signal.raise_signal",
    "builtins.exec",
    "builtins.eval",
    "sys.exit",
    "glob.glob",
    "threading.Thread",
]
PACKAGE_POWERS = [
    "torch.load",
    "torch.hub.load",
    "torch.jit.load",
    "torch.utils.cpp_extension.load_inline",
    "torch.utils.collect_env.run",
    "torch.utils.model_zoo.load_url",
    "torch.serialization.load",
    "torch.ops.load_library",
    "torch.package.PackageImporter",
    "torch.utils.data.TensorDataset",
    "numpy.load",
    "pandas.read_pickle",
    "joblib.load",
    "dill.load",
    "yaml.unsafe_load",
    "requests.get",
    "torchvision.io.read_file",
    "torchvision.datasets.utils.download_url",
    "torchvision.datasets.folder.default_loader",
    "torchvision.datasets.VisionDataset",
    "aurane.runtime.save_file",
    "aurane.compile.compile_file",
    "aurane.data.torch",
]
BARE = [
    "eval",
    "exec",
    "open",
    "getattr",
    "__import__",
    "compile",
    "breakpoint",
    "input",
    "FakeData",
]
DUNDER_TAILS = [
    "__init__",
    "__class__",
    "__dict__",
    "__builtins__",
    "__globals__",
    "__call__",
    "__loader__",
]


def _from(rng: random.Random, parts: Parts) -> tuple[Parts, str, bool, tuple[str, ...]]:
    pick = rng.random()
    if pick < 0.6:
        target = rng.choice(STDLIB_POWERS + PACKAGE_POWERS)
    elif pick < 0.7:
        target = rng.choice(BARE)
    else:  # a dunder after an allowed class or a module of one's own
        base = rng.choice(["torchvision.datasets.MNIST", "aurane.data.SyntheticImages", "mylib"])
        target = f"{base}.{rng.choice(DUNDER_TAILS)}"
    module = target.rpartition(".")[0] or target
    uses = [
        "",
        "use torch",
        f"use {module}",
        f"use {module.split('.')[0]}",
        f"use {module} as m",
        f"use {disguise(module.split('.')[0], rng)}",
    ]
    use = rng.choice(uses)
    shown = disguise(target, rng) if rng.random() < 0.4 else target
    imports = (use.split()[1],) if use else ()
    parts = replace(parts, use=(use,) if use else (), source=shown)
    return parts, f"from {shown} ({use or 'no use'})", True, imports


# ------------------------------------------------------------------ names

NAMES = [
    "file",
    "import",
    "class",
    "def",
    "lambda",
    "self",
    "super",
    "print",
    "open",
    "eval",
    "exec",
    "torch",
    "nn",
    "F",
    "rt",
    "random",
    "np",
    "seed",
    "model",
    "dataset",
    "train_net",
    "_make_images_loader",
    "Net",
    "x",
    "h",
    "width",
    "images",
    "__init__",
    "__class__",
    "match",
    "case",
    "type",
    "_",
    "os",
    "sys",
    "math",
    "DataLoader",
]


def _names(rng: random.Random, parts: Parts) -> tuple[Parts, str, bool, tuple[str, ...]]:
    name = rng.choice(NAMES)
    hostile = disguise(name, rng, look_alike=rng.random() < 0.3)
    role = rng.choice(
        [
            "field",
            "twin_field",
            "model",
            "tensor",
            "param",
            "const",
            "dataset",
            "transform_keyword",
            "layer",
            "block",
        ]
    )
    if role == "field":
        parts = replace(parts, dataset_fields=(*parts.dataset_fields, f"{hostile} = 1"))
    elif role == "twin_field":  # the field twice to Python: `ﬁle` and `file`
        twin = rng.choice(["size", "batch", "num_classes", "file", "import"])
        fields = (*parts.dataset_fields, f"{disguise(twin, rng, look_alike=False)} = 2")
        parts = replace(parts, dataset_fields=fields)
        hostile = twin
    elif role == "model":
        parts = replace(parts, model=hostile)
    elif role == "tensor":
        parts = replace(parts, tensor=hostile)
    elif role == "param":
        parts = replace(parts, param=hostile)
    elif role == "const":
        parts = replace(
            parts,
            constants=(*parts.constants, f"{hostile} = 3"),
            body=(*parts.body, f"{{t}} = dense({{t}}, {hostile})"),
        )
    elif role == "dataset":
        parts = replace(parts, dataset=hostile)
    elif role == "transform_keyword":
        keyword = rng.choice(["mean", "std", "import", "file", "__class__"])
        call = f"Normalize({disguise(keyword, rng)}=0.5, std=0.5)"
        kept = tuple(f for f in parts.dataset_fields if not f.startswith("transforms ="))
        parts = replace(parts, dataset_fields=(*kept, f"transforms = [{call}]"))
        hostile = call
    elif role == "layer":
        parts = replace(parts, body=(*parts.body, f"{{t}} = dense({{t}}, 8) as {hostile}"))
    else:  # a block with a hostile parameter name
        block = f"model Wide({hostile}):\n    def forward(x):\n        x -> dense({hostile})\n"
        parts = replace(
            parts, blocks=(*parts.blocks, block), body=(*parts.body, "{t} = {t} -> Wide(8)")
        )
    return parts, f"{role} {hostile!a}", False, ()


# ------------------------------------------------------------------ numbers

INFINITE = (
    "1e309",
    "-1e309",
    "9" * 400,
    "10.0 ** 400",
    "2 ** 1024",
    "1e308 * 10",
    "-(2 ** 1023) * 2",
    "1.8e308",
    "99999999999999999999e300",
)
FINITE = (
    "0",
    "-1",
    "0.0",
    "-0.0",
    "1e-400",
    "2 ** 63",
    "2 ** 64",
    "10 ** 30",
    "1e308",
    "1_000_000_000_000",
    "1 / 3",
    "0.5",
    "1",
)


@cache
def option_places() -> tuple[tuple[str, str, str], ...]:
    """(train field, option name, numeric keyword) of every catalog option."""
    places = []
    catalogs = [
        ("optimizer", config.OPTIMIZERS),
        ("scheduler", config.SCHEDULERS),
        ("loss", config.LOSSES),
        ("callbacks", config.CALLBACKS),
    ]
    for fieldname, specs in catalogs:
        for spec in specs:
            for param in spec.params:
                if param.kind in (ArgKind.INT, ArgKind.FLOAT):
                    places.append((fieldname, spec.name, param.name))
    return tuple(places)


@cache
def numeric_train_fields() -> tuple[str, ...]:
    kinds = (config.FieldKind.INT, config.FieldKind.FLOAT)
    return tuple(f.name for f in config.TRAIN_FIELDS if f.kind in kinds)


OP_PLACES = (
    "{t} = dense({t}, N)",
    "{t} = dropout({t}, N)",
    "{t} = leaky_relu({t}, N)",
    "{t} = layer_norm({t}, eps=N)",
    "{t} = {t} -> dense(8).leaky_relu(N)",
    "{t} = clamp({t}, min=N)",
    "{t} = {t} * N",
    "{t} = {t} + N",
    "{t} = reshape({t}, N, -1)",
)


def _numbers(rng: random.Random, parts: Parts) -> tuple[Parts, str, bool, tuple[str, ...]]:
    infinite = rng.random() < 0.6
    value = rng.choice(INFINITE if infinite else FINITE)
    where = rng.choice(["option", "train", "dataset", "op", "shape", "const", "dim", "budget"])
    if where == "option":
        fieldname, name, keyword = rng.choice(option_places())
        call = f"{name}({keyword}=({value}))"
        if fieldname == "scheduler" and name == "step_lr" and keyword != "step_size":
            call = f"step_lr(step_size=1, {keyword}=({value}))"
        line = f"{fieldname} = [{call}]" if fieldname == "callbacks" else f"{fieldname} = {call}"
        kept = tuple(f for f in parts.train_fields if not f.startswith(f"{fieldname} ="))
        parts = replace(parts, train_fields=(*kept, line))
    elif where == "train":
        name = rng.choice(numeric_train_fields())
        parts = replace(parts, train_fields=(*parts.train_fields, f"{name} = {value}"))
    elif where == "dataset":
        name = rng.choice(["size", "num_classes", "batch", "num_workers", "image_size"])
        shown = f"(1, {value}, 4)" if name == "image_size" else value
        kept = tuple(f for f in parts.dataset_fields if not f.startswith(f"{name} ="))
        parts = replace(parts, dataset_fields=(*kept, f"{name} = {shown}"))
    elif where == "op":
        line = rng.choice(OP_PLACES).replace("N", f"({value})")
        parts = replace(parts, body=(*parts.body, line))
    elif where == "shape":
        parts = replace(parts, model_fields=(f"input_shape = (1, {value}, 4)",))
    elif where == "const":
        parts = replace(parts, constants=(f"width = {value}",))
    elif where == "dim":
        parts = replace(
            parts,
            constants=(*parts.constants, f"seq = dim(1, {value})"),
            model_fields=("input_shape = (seq, 16)",),
            dataset_fields=(*parts.dataset_fields[:-1], "batch = 4"),
        )
    else:
        parts = replace(parts, model_fields=(*parts.model_fields, f"budget params <= {value}"))
    # an infinite value in any of these is refused; a budget amount must be whole anyway
    return parts, f"{value} in {where}", infinite, ()


# ------------------------------------------------------------------ repeats

HUGE_COUNTS = (10_001, 65_536, 1_000_000, 2**31, 2**63, 10**30)


def _repeats(rng: random.Random, parts: Parts) -> tuple[Parts, str, bool, tuple[str, ...]]:
    style = rng.choice(["huge", "nested", "blocks", "deep", "many"])
    if style == "deep":  # D_i calls D_(i-1) once: Net, D_depth ... D_1, Step levels
        depth = rng.choice([rng.randint(1, 40), rng.randint(100, 3000)])
        blocks = list(parts.blocks)
        for i in range(1, depth + 1):
            inner = "Step" if i == 1 else f"D{i - 1}"
            blocks.append(f"model D{i}:\n    def forward(x):\n        x -> {inner}()\n")
        body = (*parts.body, f"{{t}} = {{t}} -> D{depth}()")
        return replace(parts, blocks=tuple(blocks), body=body), f"deep {depth}", depth + 2 > 32, ()
    if style == "huge":
        count = rng.choice(HUGE_COUNTS)
        body = (*parts.body, f"{{t}} = {{t}} -> repeat(Step, {count})")
        return replace(parts, body=body), f"repeat count {count}", True, ()
    if style == "nested":  # R_i repeats R_(i-1) k times: k ** depth copies of Step
        depth, k = rng.randint(2, 6), rng.choice([2, 10, 50, 100, 1000])
        blocks = list(parts.blocks)
        for i in range(1, depth + 1):
            inner = "Step" if i == 1 else f"R{i - 1}"
            blocks.append(
                f"model R{i}:\n    input_shape = (8,)\n    def forward(x):\n"
                f"        x -> repeat({inner}, {k})\n"
            )
        body = (*parts.body, f"{{t}} = {{t}} -> R{depth}()")
        return (
            replace(parts, blocks=tuple(blocks), body=body),
            f"nested {k}**{depth}",
            (2 * k**depth > 20_000),
            (),
        )
    if style == "blocks":  # B_i calls B_(i-1) twice: 2 ** depth copies, no repeat
        depth = rng.randint(5, 40)
        blocks = list(parts.blocks)
        for i in range(1, depth + 1):
            inner = "Step" if i == 1 else f"B{i - 1}"
            blocks.append(
                f"model B{i}:\n    input_shape = (8,)\n    def forward(x):\n"
                f"        x -> {inner}() -> {inner}()\n"
            )
        body = (*parts.body, f"{{t}} = {{t}} -> B{depth}()")
        return (
            replace(parts, blocks=tuple(blocks), body=body),
            f"blocks 2**{depth}",
            (2 * 2**depth > 20_000),
            (),
        )
    count = rng.randint(2, 9)  # many repeats side by side
    size = rng.choice([100, 1000, 5000])
    body = (*parts.body, *[f"{{t}} = {{t}} -> repeat(Step, {size})"] * count)
    return replace(parts, body=body), f"{count} repeats of {size}", 2 * size * count > 20_000, ()


# ------------------------------------------------------------------ budgets


def _budgets(rng: random.Random, parts: Parts) -> tuple[Parts, str, bool, tuple[str, ...]]:
    at = rng.choice(
        [
            "at batch 0",
            "at batch 0, seq 4",
            "at batch 4, seq 0",
            "at batch 1T",
            "at batch 99999999999999999999",
            "at seq 4096",
            "at batch 2, seq 16",
        ]
    )
    amount = rng.choice(["25M", "0", "1", "1T", "9" * 30, "4.1G", "999999999999Ti"])
    metric = rng.choice(["params", "macs", "flops", "activations"])
    symbolic = "seq" in at or rng.random() < 0.5
    fields = ("input_shape = (seq, 16)",) if symbolic else parts.model_fields
    constants = (*parts.constants, "seq = dim(1, 2048)") if symbolic else parts.constants
    parts = replace(
        parts, model_fields=(*fields, f"budget {metric} <= {amount} {at}"), constants=constants
    )
    must = re.search(r"\b(batch|seq) 0\b", at) is not None or "seq 4096" in at
    return parts, f"budget {metric} <= {amount} {at}", must, ()


# ------------------------------------------------------------------ use lines

RESERVED_BY_TEMPLATE = [
    "rt",
    "random",
    "time",
    "hashlib",
    "np",
    "dist",
    "DataLoader",
    "DistributedSampler",
    "torch",
    "nn",
    "F",
    "math",
    "os",
    "sys",
    "self",
    "super",
    "forward",
    "seed",
    "model",
    "dataset",
    "train_net",
    "_make_images_loader",
    "images",
    "Net",
    "x",
    "h",
    "width",
    "print",
    "open",
    "eval",
    "len",
    "type",
    "match",
    "_",
    "import",
    "class",
    "Step",
]


def _uses(rng: random.Random, parts: Parts) -> tuple[Parts, str, bool, tuple[str, ...]]:
    name = rng.choice(RESERVED_BY_TEMPLATE)
    if rng.random() < 0.3:
        name = disguise(name, rng, look_alike=False)
    module = rng.choice(["os", "numpy", "mylib", "collections"])
    line = rng.choice([f"use {module} as {name}", f"use {name}", f"use {name}.sub"])
    imports = (line.split()[1],)
    return replace(parts, use=(*parts.use, line)), line, False, imports


DRAWERS: dict[str, Callable[[random.Random, Parts], tuple[Parts, str, bool, tuple[str, ...]]]]
DRAWERS = {
    "from": _from,
    "names": _names,
    "numbers": _numbers,
    "repeats": _repeats,
    "budgets": _budgets,
    "uses": _uses,
}


def generate(seed: int) -> Program:
    """Program ``seed``: the same seed gives the same program (kind cycles with the seed)."""
    rng = random.Random(seed)
    kind = KINDS[seed % len(KINDS)]
    parts, note, must, uses = DRAWERS[kind](rng, Parts())
    if rng.random() < 0.2:  # a second hostile part of another kind
        other = rng.choice([k for k in KINDS if k != kind])
        parts, note2, must2, uses2 = DRAWERS[other](rng, parts)
        note, must, uses = f"{note}; {note2}", must or must2, uses + uses2
    return Program(seed, kind, parts, note, must, uses)


# ------------------------------------------------------------------ the judge


@cache
def benign_output() -> str:
    return compile_source(Parts().render(), validate=True)


def judge(program: Program) -> tuple[str, str]:
    """(verdict, detail): "rejected", "accepted", or "bug" with what went wrong."""
    source = program.source
    lines = source.count("\n") + 1
    try:
        front = run_front_end(source, "hostile.aur")
    except Exception as error:  # the CLI would exit 123
        return "bug", f"front end raised {type(error).__name__}: {error}"
    found = [d for d in front.diagnostics if d.is_error]
    if found:
        unlocated = [d for d in found if d.span is None or not 1 <= d.span.line <= lines]
        if unlocated:
            return "bug", f"unlocated error {unlocated[0].code}: {unlocated[0].message}"
        return "rejected", found[0].code
    if program.must_refuse:
        return "bug", f"accepted although it must be refused: {program.note}"
    try:
        code = compile_source(source, validate=True, filename="hostile.aur")
    except CompilationError as error:
        return "bug", f"check accepted, compile refused: {error.diagnostics[0].message}"
    except Exception as error:
        return "bug", f"compile raised {type(error).__name__}: {error}"
    # as Python reads them: `use ｏｓ` imports os
    dotted = unicodedata.normalize("NFKC", program.parts.source)
    uses = tuple(unicodedata.normalize("NFKC", m) for m in program.uses)
    uses += (dotted.rpartition(".")[0],)
    derived = (dotted,)
    wrong = problems(code, uses=uses, twin=benign_output(), derived=derived)
    if wrong:
        return "bug", f"generated code: {wrong}"
    return "accepted", ""


@contextmanager
def hang_guard(seconds: int) -> Iterator[None]:
    """A hang becomes a finding, not a stuck run (a guard, not a speed limit)."""

    def expire(signum: int, frame: object) -> None:
        raise TimeoutError(f"still running after {seconds} s: a hang")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def run(seeds: range, every: int = 0) -> tuple[Counter[str], list[tuple[Program, str]]]:
    """Verdict counts by kind, and the findings."""
    counts: Counter[str] = Counter()
    findings: list[tuple[Program, str]] = []
    for done, seed in enumerate(seeds, 1):
        program = generate(seed)
        try:
            with hang_guard(120):
                verdict, detail = judge(program)
        except TimeoutError as error:
            verdict, detail = "bug", str(error)
        counts[f"{program.kind} {verdict}"] += 1
        if verdict == "bug":
            findings.append((program, detail))
            print(f"FINDING seed {seed} ({program.note!a}): {detail}", flush=True)
        if every and done % every == 0:
            print(f"{done} programs, {len(findings)} findings", flush=True)
    return counts, findings


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.fuzz.hostile", description=__doc__)
    parser.add_argument("--programs", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1, help="campaign seed: programs S*10**6+i")
    parser.add_argument("--every", type=int, default=1000, help="progress every N programs")
    parser.add_argument("--show", type=int, help="print program SEED and its verdict")
    args = parser.parse_args(argv)
    if args.show is not None:
        program = generate(args.show)
        print(program.source)
        print(f"# {program.kind}: {program.note}; {judge(program)}")
        return 0
    start = args.seed * 1_000_000
    began = time.perf_counter()
    counts, findings = run(range(start, start + args.programs), args.every)
    elapsed = time.perf_counter() - began
    print(f"{args.programs} programs in {elapsed:.0f} s, {len(findings)} findings")
    for key in sorted(counts):
        print(f"  {key}: {counts[key]}")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
