"""``examples/zoo/t5.aur`` against Hugging Face's ``T5Model`` (issue 23 item 5).

Numerically at a small configuration (the program's top-level constants rewritten: width
32, 3 encoder and 2 decoder layers of 4 heads; the bucket arithmetic, masks and tying are
the shipped program's), on padded batches long enough to reach the logarithmic buckets
(source 40 > 8 exact buckets per direction, target 24 > 16); structurally at the default
``T5Config()`` on the ``meta`` device.
"""

from __future__ import annotations

import re
import statistics
import time
import types
from pathlib import Path
from typing import Any

import pytest

from aurane.analysis.bind import bind_sizes
from aurane.analysis.profile import profile
from aurane.compile import compile_detailed
from aurane.frontend import run_front_end

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
FlopCounterMode = pytest.importorskip("torch.utils.flop_counter").FlopCounterMode

PROGRAM = Path(__file__).resolve().parents[2] / "examples" / "zoo" / "t5.aur"
SMALL = {"vocab": 100, "d_model": 32, "d_kv": 8, "d_ff": 64, "n_layer": 3}
SMALL |= {"n_decoder_layer": 2, "n_head": 4}
SRC, TGT, BATCH = 40, 24, 3


def _source(constants: dict[str, int]) -> str:
    text = PROGRAM.read_text(encoding="utf-8")
    for name, value in constants.items():
        text, count = re.subn(rf"^{name} = .*$", f"{name} = {value}", text, flags=re.MULTILINE)
        assert count == 1, name
    return text


def _config(**overrides: Any) -> Any:
    return transformers.T5Config(**overrides)


def _small_config() -> Any:
    c = SMALL
    return _config(
        vocab_size=c["vocab"],
        d_model=c["d_model"],
        d_kv=c["d_kv"],
        d_ff=c["d_ff"],
        num_layers=c["n_layer"],
        num_decoder_layers=c["n_decoder_layer"],
        num_heads=c["n_head"],
    )


@pytest.fixture(scope="module")
def small() -> tuple[Any, Any, Any]:
    """(generated module, reference with perturbed 1-D parameters, compile result)."""
    result = compile_detailed(_source(SMALL), validate=True, filename="t5.aur")
    module = types.ModuleType("zoo_t5")
    exec(compile(result.output, "<zoo t5>", "exec"), module.__dict__)
    torch.manual_seed(0)
    reference = transformers.T5Model(_small_config()).eval()
    generator = torch.Generator().manual_seed(2)
    with torch.no_grad():
        for parameter in reference.parameters():
            if parameter.ndim == 1:  # the RMS norm weights (ones): T5 has no biases
                parameter.add_(0.1 * torch.randn(parameter.shape, generator=generator))
    torch.manual_seed(1)
    generated = module.T5().eval()
    generated.load_state_dict(reference.state_dict(), strict=True)
    return generated, reference, result


def _inputs() -> tuple[Any, Any, Any]:
    generator = torch.Generator().manual_seed(3)
    ids = torch.randint(1, SMALL["vocab"], (BATCH, SRC), generator=generator)
    decoder_ids = torch.randint(0, SMALL["vocab"], (BATCH, TGT), generator=generator)
    mask = torch.ones(BATCH, SRC, dtype=torch.int64)
    mask[1, 25:] = 0  # padded rows: the encoder and the cross-attention must not see these
    mask[2, 3:] = 0
    ids[mask == 0] = 0
    return ids, mask, decoder_ids


def test_t5_loads_hugging_face_strict_and_computes_the_same(small: tuple[Any, Any, Any]) -> None:
    generated, reference, _ = small
    assert list(generated.state_dict()) == list(reference.state_dict()) or set(
        generated.state_dict()
    ) == set(reference.state_dict())
    # one table under three names, as HF ties them
    assert generated.encoder.embed_tokens.weight is generated.shared.weight
    assert generated.decoder.embed_tokens.weight is generated.shared.weight
    ids, mask, decoder_ids = _inputs()
    with torch.no_grad():
        expected = reference(
            input_ids=ids, attention_mask=mask, decoder_input_ids=decoder_ids
        ).last_hidden_state
        out = generated(ids, mask, decoder_ids)
    atol = 1e-5 * expected.abs().max().item()
    torch.testing.assert_close(out, expected, rtol=1e-5, atol=atol)
    # the padding matters (a mask that were ignored would pass the comparison above only if
    # HF ignored it too): unmasked, the padded rows change and the full row does not
    with torch.no_grad():
        unmasked = generated(ids, torch.ones_like(mask), decoder_ids)
    assert not torch.allclose(unmasked[1:], out[1:])
    torch.testing.assert_close(unmasked[0], out[0])
    # causal: changing the last target token changes no earlier position
    changed = decoder_ids.clone()
    changed[:, -1] = (changed[:, -1] + 1) % SMALL["vocab"]
    with torch.no_grad():
        later = generated(ids, mask, changed)
    torch.testing.assert_close(later[:, :-1], out[:, :-1])
    assert not torch.allclose(later[:, -1], out[:, -1])


def test_t5_works_at_any_sequence_length(small: tuple[Any, Any, Any]) -> None:
    generated, reference, _ = small
    generator = torch.Generator().manual_seed(4)
    for src, tgt in ((1, 1), (7, 200), (150, 3)):  # past max_distance = 128 as well
        ids = torch.randint(0, SMALL["vocab"], (2, src), generator=generator)
        decoder_ids = torch.randint(0, SMALL["vocab"], (2, tgt), generator=generator)
        mask = torch.ones_like(ids)
        with torch.no_grad():
            expected = reference(
                input_ids=ids, attention_mask=mask, decoder_input_ids=decoder_ids
            ).last_hidden_state
            out = generated(ids, mask, decoder_ids)
        atol = 1e-5 * expected.abs().max().item()
        torch.testing.assert_close(out, expected, rtol=1e-5, atol=atol)


def _bound_profile(result: Any, src: int, tgt: int) -> Any:
    front = run_front_end(_source(SMALL), "t5.aur")
    assert front.resolved is not None
    graphs, found = bind_sizes(front.resolved, [result.graphs["T5"]], {"src": src, "tgt": tgt})
    assert graphs, found
    return profile(graphs[0])


def test_t5_parameters_and_macs_equal_the_reference(small: tuple[Any, Any, Any]) -> None:
    generated, reference, result = small
    count = sum(p.numel() for p in reference.parameters())  # the shared table once
    assert sum(p.numel() for p in generated.parameters()) == count
    assert profile(result.graphs["T5"]).parameters == count
    ids, mask, decoder_ids = _inputs()
    arguments = {"input_ids": ids, "attention_mask": mask, "decoder_input_ids": decoder_ids}
    counter = FlopCounterMode(display=False)
    with counter:  # autograd on: the path training takes
        reference(**arguments)
    seen = int(counter.get_total_flops()) // (2 * BATCH)
    macs = _bound_profile(result, SRC, TGT).macs
    # the cross-attention's mask is a bool tensor without grad, so CPU SDPA runs it in its
    # fused kernel, which the counter cannot see: its two products (scores, weighted values)
    heads, width = SMALL["n_head"], SMALL["d_kv"]
    assert macs == seen + SMALL["n_decoder_layer"] * 2 * heads * TGT * SRC * width
    # in the math kernel the counter sees every product, and the figures are equal
    math = torch.nn.attention.SDPBackend.MATH
    counter = FlopCounterMode(display=False)
    with counter, torch.nn.attention.sdpa_kernel(math):
        reference(**arguments)
    assert macs == int(counter.get_total_flops()) // (2 * BATCH)


def test_default_program_checks_and_counts_t5_config_parameters() -> None:
    front = run_front_end(PROGRAM.read_text(encoding="utf-8"), "t5.aur")
    assert not [d for d in front.diagnostics if d.is_error]
    with torch.device("meta"):
        reference = transformers.T5Model(_config())
    count = sum(p.numel() for p in reference.parameters())
    assert count == 60_506_624  # t5-small
    assert profile(front.graphs["T5"]).parameters == count


def test_check_time_of_the_default_program_is_reported() -> None:
    """Not a wall-clock assert: the median of warm front-end runs, printed for docs/zoo.md."""
    text = PROGRAM.read_text(encoding="utf-8")
    run_front_end(text, "t5.aur")
    times = []
    for _ in range(5):
        start = time.perf_counter()
        front = run_front_end(text, "t5.aur")
        times.append(time.perf_counter() - start)
        assert "T5" in front.graphs
    print(f"t5.aur front end: median {statistics.median(times) * 1000:.1f} ms")


# -- what the program needed of the compiler (each failed before) ----------------------------

FIXES = """
seq = dim(1, 64)

model Cross:
    def forward(x, memory, keep):
        y = multiply(add(x, memory), keep)
        return y

model Layer(first: bool = false):
    def forward(x, bias):
        h = dense(x, 8) as proj
        h = Cross(h, x, bias)
        if first:
            bias = multiply(bias, 2.0)
        return h, bias

model Net:
    input_shape = {ids: (seq,), other: (seq,)}
    input_dtype = {ids: int64, other: int64}
    def forward(ids, other):
        x = embedding(ids, 11, 8) as wte
        y = embedding(other, 11, 8, tie=wte) as wte2
        pad = eq(ids, 0)
        x = masked_fill(x, unsqueeze(pad, -1), 0.0)
        x, bias = Layer(x, y, first=true) as layers.0
        x, _ = Layer(x, bias) as layers.1
        return x
"""


def test_named_multi_output_calls_symbolic_ties_and_blocks_of_several_inputs() -> None:
    from aurane.incremental import IncrementalFrontEnd

    source = FIXES.replace(
        "        x = masked_fill(x, unsqueeze(pad, -1), 0.0)\n",
        "        m = unsqueeze(pad, -1)\n        x = masked_fill(x, m, 0.0)\n",
    )
    front = run_front_end(source, "fixes.aur")
    # a parameterless block of several inputs called inside a parameterised one is no S006,
    # and '_' is a discarded value (no S018)
    assert front.ok and not front.diagnostics, [(d.code, d.message) for d in front.diagnostics]
    engine = IncrementalFrontEnd("fixes.aur")
    assert not engine.update(source).diagnostics  # the incremental checker agrees
    # validate=True: a named tensor argument (mask=m) is one more node input, no wrong arity
    result = compile_detailed(source, validate=True, filename="fixes.aur")
    module = types.ModuleType("fixes")
    exec(compile(result.output, "<fixes>", "exec"), module.__dict__)
    model = module.Net()
    # 'as layers.0' on a call that returns two tensors names it (it was dropped)
    assert [k for k in model.state_dict() if k.startswith("layers.")] == [
        "layers.0.proj.weight",
        "layers.0.proj.bias",
        "layers.1.proj.weight",
        "layers.1.proj.bias",
    ]
    # tie= on an embedding of ids of symbolic length (it raised ConcreteSizeNeeded)
    assert model.wte2.weight is model.wte.weight
    ids = torch.tensor([[1, 2, 0], [3, 0, 0]])
    assert model(ids, ids).shape == (2, 3, 8)
