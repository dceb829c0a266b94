"""Profile accuracy: Aurane's static parameter and FLOP counts beside the peers.

    .venv/bin/python bench/profile_accuracy.py [--quick]

Models: bench/programs/mix.aur (conv, batch norm, residual blocks, reshape, attention
blocks, MLP, CNN), examples/*.aur, examples/zoo/*.aur when present, and the valid
conformance corpus with its hand-computed true counts (``../shared/corpus/valid`` when
it sits beside the checkout, else the project's copy in ``tests/corpus/valid``).

Every peer runs on the module Aurane generates for the model, in the same mode for all:
train mode with autograd on (no ``no_grad``, no ``eval``), so nn.MultiheadAttention takes
its ordinary path, not the fused inference fast path that hides work from counters.
The input is a batch of 2 (batch norm needs 2 in train mode) and counts are divided by 2.
Peers: ``torch.utils.flop_counter.FlopCounterMode`` always; torchinfo, fvcore, ptflops,
thop only when installed. FLOPs are 2 per multiply-accumulate everywhere (peers that
report MACs are doubled).

A difference is labelled "convention" when the peer documents counting other work than
Aurane does (bias adds, activations, pooling, normalization) and counts more on a model
that has such layers; otherwise it is a "miss" (of whichever side is off the truth, when
a true count is known).

Checked equal for every model before comparing: the parameter count (Aurane's IR vs
torch's ``numel`` of the generated module) and the output shape (IR vs the module's
actual output).
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import io
import json
import logging
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as c  # noqa: E402
import torch  # noqa: E402
from torch import nn  # noqa: E402

# the shared conformance corpus beside the checkout, else the project's copy of it
CORPUS = next(
    (
        folder
        for folder in (
            c.REPO.parent / "shared" / "corpus" / "valid",
            c.REPO / "tests" / "corpus" / "valid",
        )
        if (folder / "expected.json").is_file()
    ),
    c.REPO / "tests" / "corpus" / "valid",
)
BATCH = 2
Count = tuple[int | None, int | None]  # (parameters, FLOPs per sample); None: not reported

# What each peer counts besides the products Aurane counts (from their documentation),
# and the IR ops that bring that work into a model.
CONVENTIONS: dict[str, tuple[str, frozenset[str]]] = {
    "flop_counter": ("counts only aten matmul/conv/attention products, as Aurane", frozenset()),
    "torchinfo": (
        "mult-adds include the bias add of dense/conv layers",
        frozenset({"dense", "conv1d", "conv2d"}),
    ),
    "fvcore": (
        "counts normalization, pooling and upsample work",
        frozenset({"batchnorm", "layer_norm", "maxpool", "avgpool", "global_avg_pool", "upsample"}),
    ),
    "ptflops": (
        "adds bias, activation, pooling and normalization work to the MACs",
        frozenset(
            {
                "dense",
                "conv1d",
                "conv2d",
                "relu",
                "gelu",
                "batchnorm",
                "layer_norm",
                "maxpool",
                "avgpool",
                "global_avg_pool",
                "upsample",
                "leaky_relu",
                "elu",
                "sigmoid",
                "tanh",
            }
        ),
    ),
    "thop": (
        "counts activation, pooling and normalization ops",
        frozenset(
            {
                "relu",
                "gelu",
                "batchnorm",
                "layer_norm",
                "maxpool",
                "avgpool",
                "global_avg_pool",
                "upsample",
                "softmax",
            }
        ),
    ),
}


# ---------------------------------------------------------------- peers


def _quiet(fn: Callable[[], Count]) -> Count:
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        return fn()


def peer_flop_counter(module: nn.Module, x: torch.Tensor) -> Count:
    from torch.utils.flop_counter import FlopCounterMode

    with FlopCounterMode(display=False) as counter:
        module(x)
    return sum(p.numel() for p in module.parameters()), int(counter.get_total_flops())


def peer_torchinfo(module: nn.Module, x: torch.Tensor) -> Count:
    import torchinfo

    stats = torchinfo.summary(module, input_data=[x], verbose=0, mode="train")
    return int(stats.total_params), 2 * int(stats.total_mult_adds)


def peer_fvcore(module: nn.Module, x: torch.Tensor) -> Count:
    from fvcore.nn import FlopCountAnalysis, parameter_count

    logging.getLogger("fvcore").setLevel(logging.ERROR)
    analysis = FlopCountAnalysis(module, (x,))
    analysis.unsupported_ops_warnings(False).uncalled_modules_warnings(False)
    return int(parameter_count(module)[""]), 2 * int(analysis.total())


def peer_ptflops(module: nn.Module, x: torch.Tensor) -> Count:
    from ptflops import get_model_complexity_info

    macs, params = get_model_complexity_info(
        module,
        tuple(x.shape[1:]),
        as_strings=False,
        print_per_layer_stat=False,
        input_constructor=lambda _: x,
    )
    return (int(params) if params is not None else None), (2 * int(macs) if macs else 0)


def peer_thop(module: nn.Module, x: torch.Tensor) -> Count:
    import thop

    macs, params = thop.profile(module, inputs=(x,), verbose=False)
    return int(params), 2 * int(macs)


PEERS: dict[str, Callable[[nn.Module, torch.Tensor], Count]] = {
    "flop_counter": peer_flop_counter,
    "torchinfo": peer_torchinfo,
    "fvcore": peer_fvcore,
    "ptflops": peer_ptflops,
    "thop": peer_thop,
}


def available_peers(result: c.Result) -> dict[str, Callable[[nn.Module, torch.Tensor], Count]]:
    import importlib.util

    found = {}
    for name, fn in PEERS.items():
        module = "torch.utils.flop_counter" if name == "flop_counter" else name
        if importlib.util.find_spec(module) is None:
            result.note(f"{name} is not installed: its column is skipped")
            continue
        found[name] = fn
    return found


def run_peer(
    fn: Callable[[nn.Module, torch.Tensor], Count], module: nn.Module, x: torch.Tensor
) -> Count:
    """One peer on a fresh copy, train mode, autograd on; per-sample FLOPs."""
    model = copy.deepcopy(module).train()
    params, flops = _quiet(lambda: fn(model, x))
    return params, (None if flops is None else flops // x.shape[0])


# ---------------------------------------------------------------- models


def sample_input(graph: Any) -> torch.Tensor:
    value = graph.input_value
    shape = (BATCH, *(value.sample_shape or ()))
    if value.dtype in ("int64", "int32"):
        return torch.randint(1, 50, shape, dtype=getattr(torch, value.dtype))
    return torch.randn(shape)


def models(quick: bool, result: c.Result) -> list[tuple[str, str, str, Any, dict[str, Any] | None]]:
    """(file label, model, source, graph, truth or None) for every measured model."""
    expected: dict[str, Any] = {}
    files = [c.PROGRAMS / "mix.aur"]
    if not quick:
        examples = [*sorted((c.REPO / "examples").glob("*.aur")), *c.zoo_programs()]
        files += c.usable_programs(result, examples)
        if (CORPUS / "expected.json").is_file():
            expected = json.loads((CORPUS / "expected.json").read_text())
            files += [CORPUS / name for name in expected]
    found = []
    for path in files:
        text = path.read_text()
        front = c.run_front_end(text, path.name)
        if not front.ok:
            continue
        truths = expected.get(path.name, {}) if path.parent == CORPUS else {}
        for model, graph in front.graphs.items():
            if graph.input_value.sample_shape is None:
                continue  # a block without an input shape: measured inside its callers
            if c.too_large(graph):
                result.note(
                    f"{path.name}:{model} skipped: {graph.parameters:,} parameters, too large "
                    "to run forward and backward with every peer on this machine"
                )
                continue
            found.append((path.name, model, text, graph, truths.get(model)))
    return found


RECURRENT = frozenset({"lstm", "gru"})


def reference_flops(
    module: nn.Module, x: torch.Tensor, truth: dict[str, Any] | None
) -> tuple[int | None, str]:
    """The count a verdict is measured against: the hand-computed truth when known, else
    FlopCounterMode with attention forced onto the math kernel (every product is then an
    aten matmul it counts; the default CPU flash kernel has no FLOP formula)."""
    if truth is not None:
        return int(truth["flops_per_sample"]), "true"
    from torch.nn.attention import SDPBackend, sdpa_kernel

    with sdpa_kernel(SDPBackend.MATH):
        _, flops = run_peer(peer_flop_counter, module, x)
    return flops, "decomposed"


def label(peer: str, ours: int, theirs: int | None, ops: set[str], reference: int | None) -> str:
    if theirs is None:
        return "not reported"
    if theirs == ours:
        return "equal"
    reason, kinds = CONVENTIONS.get(peer, ("", frozenset()))
    if theirs > ours and ops & kinds:
        return f"convention ({reason})"
    if reference is None:
        return "miss"
    if ours == reference:
        return "miss (peer)"
    return "miss (aurane)" if theirs == reference else "miss (both)"


# ---------------------------------------------------------------- main


def run(settings: c.Settings) -> c.Result:
    from aurane.analysis.profile import profile
    from aurane.compile import compile_source

    result = c.Result("profile_accuracy", settings=c.configure(settings))
    result.settings["mode"] = "train mode, autograd on, batch 2, counts per sample"
    peers = available_peers(result)
    torch.manual_seed(0)
    agree: dict[str, list[str]] = {name: [] for name in peers}
    truth_hits = 0
    per_model: list[dict[str, Any]] = []
    truth_total = 0
    namespaces: dict[str, dict[str, Any]] = {}
    for file, model, text, graph, truth in models(settings.quick, result):
        if file not in namespaces:
            namespaces[file] = c.load_generated(
                compile_source(text, filename=file), f"bench_profile_{Path(file).stem}"
            )
        module: nn.Module = namespaces[file][model]()
        x = sample_input(graph)
        ours = profile(graph)
        label_model = f"{file}:{model}"
        result.work.same(
            f"{label_model}: parameters (IR vs torch numel)",
            ours.parameters,
            sum(p.numel() for p in module.parameters()),
        )
        with torch.no_grad():  # only to read the shape; the peers run with autograd on
            out_shape = tuple(module.train()(x).shape[1:])
        result.work.same(
            f"{label_model}: output shape", graph.value(graph.output).sample_shape, out_shape
        )
        ops = {n.op for n in c.flat_nodes(graph)}
        if truth is not None:
            truth_total += 1
            truth_hits += ours.flops == truth["flops_per_sample"] and (
                ours.parameters == truth["parameters"]
            )
        reference, source = reference_flops(module, x, truth)
        ours_ok = ours.flops == reference if reference is not None else None
        if ours_ok is False and truth is None and ops & RECURRENT:
            ours_ok = None  # no independent count of fused recurrent kernels
        for peer, fn in peers.items():
            try:
                params, flops = run_peer(fn, module, x)
            except Exception as error:  # a peer crashing on a model is a result too
                result.details[f"{label_model} {peer}"] = f"failed: {type(error).__name__}"
                agree[peer].append(f"{model}: failed")
                continue
            verdict = label(peer, ours.flops, flops, ops, reference)
            if verdict.startswith("miss (peer)") and peer == "flop_counter":
                verdict += (
                    ": fused CPU attention kernel has no FLOP formula"
                    if "multihead_attention" in ops
                    else ": fused scaled-dot-product kernel counted otherwise (its math path "
                    "equals Aurane)"
                    if "scaled_dot_product_attention" in ops
                    else ": fused recurrent kernel counted in part"
                    if ops & RECURRENT
                    else ""
                )
            result.details[f"{label_model} {peer}"] = {
                "aurane_flops": ours.flops,
                "peer_flops": flops,
                "peer_params": params,
                "reference_flops": reference,
                "reference": source,
                "verdict": verdict,
            }
            if peer == "flop_counter":
                per_model.append(
                    {
                        "model": label_model,
                        "aurane": ours.flops,
                        "flop_counter": flops,
                        "reference": reference,
                        "reference_kind": source,
                        "aurane_ok": ours_ok,
                        "verdict": verdict,
                    }
                )
            agree[peer].append(verdict)
    result.details["per_model"] = per_model
    checked = [m for m in per_model if m["aurane_ok"] is not None]
    exact = sum(bool(m["aurane_ok"]) for m in checked)
    result.rows.append(
        c.Row(
            "models whose Aurane FLOPs equal the reference (true count, else FlopCounterMode "
            "with attention decomposed)",
            "models",
            c.Summary.one(exact),
            c.Summary.one(len(checked)),
            "models with a reference",
            exact / len(checked) if checked else None,
            "exact / measured",
            "1.00",
            exact == len(checked),
            note=f"{len(per_model) - len(checked)} unverifiable (recurrent, no true count)"
            if len(per_model) > len(checked)
            else "",
        )
    )
    if "flop_counter" in agree:
        verdicts = agree["flop_counter"]
        equal = sum(v == "equal" for v in verdicts)
        kinds: dict[str, int] = {}
        for m in per_model:
            if m["verdict"] != "equal":
                kinds[m["verdict"]] = kinds.get(m["verdict"], 0) + 1
        misses = [f"{n} x {verdict}" for verdict, n in kinds.items()]
        result.rows.append(
            c.Row(
                "models where FlopCounterMode (default kernels, train mode) equals Aurane",
                "models",
                c.Summary.one(equal),
                c.Summary.one(len(verdicts)),
                "models measured",
                equal / len(verdicts) if verdicts else None,
                "equal / measured",
                "informational",
                None,
                note="; ".join(misses),
            )
        )
    for peer, verdicts in agree.items():
        if peer == "flop_counter" or not verdicts:
            continue
        explained = sum(v == "equal" or v.startswith("convention") for v in verdicts)
        result.rows.append(
            c.Row(
                f"models where {peer} equals Aurane or differs by convention",
                "models",
                c.Summary.one(explained),
                c.Summary.one(len(verdicts)),
                "models measured",
                explained / len(verdicts),
                "explained / measured",
                "informational",
                None,
            )
        )
    if truth_total:
        result.rows.append(
            c.Row(
                "corpus models where Aurane's params and FLOPs equal the true count",
                "models",
                c.Summary.one(truth_hits),
                c.Summary.one(truth_total),
                "models with a true count",
                truth_hits / truth_total,
                "exact / measured",
                "1.00",
                truth_hits == truth_total,
            )
        )
    else:
        result.note("--quick: the corpus with true counts is not measured")
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--smoke", action="store_true")
    args = parser.parse_args(argv)
    from report import print_result

    result = run(c.Settings.make(args.quick, smoke=args.smoke))
    print_result(result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
