"""Issue 23 item 1: models and blocks that take and return several tensors.

Syntax (docs/language.md, "Several inputs and outputs"): ``input_shape``/``input_dtype``
keyed by the forward's parameters, inputs with defaults (``ones``, ``zeros``, a number),
``return a, b``, block calls with several tensors and destructuring of several outputs.
Generated code is executed and compared with hand-written PyTorch twins.
"""

from __future__ import annotations

import json
import textwrap

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from aurane.syntax.parser import parse_program
from aurane.syntax.printer import strip_spans
from aurane.tools.format import format_text
from tests.backends.torch.util import generate, load
from tests.helpers import errors, front, only_error, where

ENCODER = """
seq = dim(1, 64)

model MaskedMean:
    def forward(h, mask):
        m = unsqueeze(mask, -1)
        total = multiply(h, m) -> sum(dim=1)
        count = sum(m, dim=1)
        return divide(total, count)

model Encoder:
    def forward(x, mask):
        h = x -> dense(16).relu
        pooled = MaskedMean(h, mask)
        return h, pooled

model Net:
    input_shape = {ids: (seq,), mask: (seq,)}
    input_dtype = {ids: int64, mask: float32}
    def forward(ids, mask=ones):
        x = ids -> embedding(50, 8)
        h, pooled = Encoder(x, mask)
        return h, pooled
"""

TWO_TOWER = """
model TwoTower:
    input_shape = {query: (8,), item: (12,)}
    def forward(query, item):
        q = query -> dense(16).relu -> dense(4)
        i = item -> dense(16).relu -> dense(4)
        return q, i
"""


# ---------------------------------------------------------------- parse and format


def test_new_forms_parse_and_format_canonically() -> None:
    source = textwrap.dedent(ENCODER).lstrip()
    assert format_text(source) == source
    program, problems = parse_program(source)
    assert not problems
    net = program.model("Net")
    assert net is not None and net.forward is not None
    assert net.forward.input_names == ("ids", "mask")
    assert [p.default is None for p in net.forward.inputs] == [True, False]


def test_messy_spelling_formats_to_the_canonical_one() -> None:
    messy = (
        "model M:\n    input_shape = { a : (4 ,) , b:(4,) }\n"
        "    def forward(a , b = 0.5):\n        return a , b\n"
    )
    assert format_text(messy) == (
        "model M:\n    input_shape = {a: (4,), b: (4,)}\n"
        "    def forward(a, b=0.5):\n        return a, b\n"
    )


_NAMES = st.sampled_from(["ids", "mask", "seg", "x", "t", "cond"])
_DEFAULTS = st.sampled_from([None, "ones", "zeros", "0", "1.5", "-1", "true"])


@settings(max_examples=60, deadline=None, derandomize=True)
@given(
    names=st.lists(_NAMES, min_size=1, max_size=4, unique=True),
    defaults=st.lists(_DEFAULTS, min_size=4, max_size=4),
    outputs=st.integers(min_value=1, max_value=3),
)
def test_formatter_round_trip_of_several_inputs_and_outputs(
    names: list[str], defaults: list[str | None], outputs: int
) -> None:
    """format(format(s)) == format(s), and formatting keeps the AST, for any mix of
    required and defaulted inputs (defaults last), dict fields and several returns."""
    required = len(names) // 2 + 1
    params = [
        name if index < required or defaults[index] is None else f"{name}={defaults[index]}"
        for index, name in enumerate(names)
    ]
    shapes = ", ".join(f"{name}: ({index + 2},)" for index, name in enumerate(names))
    dtypes = ", ".join(f"{name}: float32" for name in names)
    returned = ", ".join(names[index % len(names)] for index in range(outputs))
    source = (
        f"model M:\n    input_shape = {{{shapes}}}\n    input_dtype = {{{dtypes}}}\n"
        f"    def forward({', '.join(params)}):\n        return {returned}\n"
    )
    once = format_text(source)
    assert format_text(once) == once
    assert strip_spans(parse_program(once)[0]) == strip_spans(parse_program(source)[0])


# ---------------------------------------------------------------- located errors


@pytest.mark.parametrize(
    ("source", "code", "line", "column", "words"),
    [
        ("x = {1: 2}\n", "P041", 1, 6, "key must be a name"),
        ("x = {a: 1, a: 2}\n", "P041", 1, 12, "twice"),
        ("model M:\n    def forward(x, x):\n        return x\n", "P042", 2, 20, "twice"),
        (
            "model M:\n    def forward(m=ones, x):\n        return x\n",
            "P043",
            2,
            25,
            "follows an input with a default",
        ),
        (
            "model M:\n    def forward(x, m=relu):\n        return x\n",
            "P044",
            2,
            22,
            "ones, zeros or a number",
        ),
        (
            "model M:\n    def forward(x, m=none):\n        return x\n",
            "P044",
            2,
            22,
            "not supported yet",
        ),
    ],
)
def test_parse_errors_are_located(
    source: str, code: str, line: int, column: int, words: str
) -> None:
    found = only_error(source)
    assert found.code == code and words in found.message
    assert where(found) == (line, column)


def test_shape_key_that_is_no_input_is_located() -> None:
    found = only_error(
        """
        model M:
            input_shape = {x: (4,), mask: (4,), msk: (4,)}
            def forward(x, mask=ones):
                return x
        """
    )
    assert found.code == "S150" and "'msk'" in found.message
    assert where(found) == (2, 41)


def test_dtype_key_that_is_no_input_is_located() -> None:
    found = only_error(
        """
        model M:
            input_shape = {x: (4,), mask: (4,)}
            input_dtype = {x: float32, mas: bool}
            def forward(x, mask=ones):
                return x
        """
    )
    assert found.code == "S150" and "'mas'" in found.message
    assert where(found) == (3, 32)


def test_input_without_a_shape_is_located() -> None:
    found = only_error(
        """
        model M:
            input_shape = {x: (4,)}
            def forward(x, mask=ones):
                return x
        """
    )
    assert found.code == "S150" and "'mask'" in found.message
    assert where(found) == (2, 19)
    assert found.labels[0].span.line == 3  # the input, where the forward declares it


def test_tuple_shape_for_several_inputs_names_the_fix() -> None:
    found = only_error(
        """
        model M:
            input_shape = (4,)
            def forward(x, mask):
                return x
        """
    )
    assert found.code == "S150" and "{x: (...), mask: (...)}" in (found.hint or "")


def test_missing_required_input_at_a_block_call_is_located() -> None:
    found = only_error(
        """
        model Pair:
            def forward(a, b):
                return add(a, b)
        model M:
            input_shape = (4,)
            def forward(x):
                y = Pair(x)
                return y
        """
    )
    assert found.code == "S151" and "'b'" in found.message
    assert where(found) == (7, 13)


def test_wrong_dtype_at_a_block_call_names_the_input() -> None:
    found = only_error(
        """
        model Pool:
            input_shape = {h: (4,), mask: (4,)}
            input_dtype = {h: float32, mask: float32}
            def forward(h, mask):
                return multiply(h, mask)
        model M:
            input_shape = {x: (4,), ids: (4,)}
            input_dtype = {x: float32, ids: int64}
            def forward(x, ids):
                y = Pool(x, ids)
                return y
        """
    )
    assert found.code == "T130" and "'mask'" in found.message and "int64" in found.message
    assert where(found) == (10, 21)


@pytest.mark.parametrize(("names", "count"), [("a, b, c", 3), ("a", 1)])
def test_wrong_number_of_names_at_destructuring(names: str, count: int) -> None:
    found = only_error(
        f"""
        model Two:
            def forward(x):
                h = x -> dense(4)
                return x, h
        model M:
            input_shape = (4,)
            def forward(x):
                {names} = Two(x)
                return a
        """
    )
    assert found.code == "S152"
    assert where(found) == (8, 9 if count == 3 else 13)


def test_training_a_model_with_several_outputs_must_name_the_one_the_loss_reads() -> None:
    found = [
        d
        for d in errors(
            TWO_TOWER
            + """
dataset d:
    from aurane.data.Synthetic
    shape = (8,)
    classes = 4
train TwoTower on d:
    epochs = 1
"""
        )
        if d.code == "S191"
    ]
    assert len(found) == 1 and where(found[0]) == (12, 7)  # train TwoTower
    assert "(q, i)" in found[0].message


def test_gan_training_of_a_model_with_several_inputs_is_not_yet() -> None:
    source = (
        TWO_TOWER
        + """
model D:
    input_shape = (4,)
    def forward(x):
        x -> dense(1).sigmoid
dataset d:
    from aurane.data.SyntheticRegression
    features = 4
train_gan TwoTower and D on d:
    epochs = 1
"""
    )
    found = [d for d in errors(source) if d.code == "S153"]
    assert len(found) == 1 and where(found[0]) == (15, 11)  # train_gan TwoTower


# ---------------------------------------------------------------- IR


def test_ir_lists_every_input_and_output_with_shared_symbols() -> None:
    fe = front(ENCODER)
    assert not [d for d in fe.diagnostics if d.is_error]
    graph = fe.graphs["Net"]
    assert [v.name for v in graph.inputs] == ["ids", "mask"]
    assert [v.dtype for v in graph.inputs] == ["int64", "float32"]
    assert graph.inputs[0].shape == graph.inputs[1].shape  # seq, shared by name
    assert [graph.output_label(i) for i in range(2)] == ["h", "pooled"]
    assert graph.input_defaults == {"mask": "ones"}
    data = json.loads(json.dumps(graph.to_json()))
    assert [i["name"] for i in data["inputs"]] == ["ids", "mask"]
    assert data["inputs"][1]["default"] == "ones"
    assert [o["name"] for o in data["outputs"]] == ["h", "pooled"]
    assert data["outputs"][1]["shape"] == ["batch", 16]
    assert list(data["symbols"]) == ["seq"]
    # one-input graphs keep their JSON as it was
    assert "inputs" not in front(TWO_TOWER.replace("item", "query")).graphs


def test_ir_text_shows_inputs_defaults_and_outputs() -> None:
    from aurane.ir.printer import graph_to_text

    text = graph_to_text(front(ENCODER).graphs["Net"])
    first = text.splitlines()[0]
    assert "ids: (batch, seq) int64, mask: (batch, seq) float32 = ones" in first
    assert first.split("->")[1].split("#")[0].strip() == "encoder1, encoder1_1"
    assert text.rstrip().endswith("return encoder1, encoder1_1")


# ---------------------------------------------------------------- generated code


class _TowerTwin(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.q1, self.q2 = nn.Linear(8, 16), nn.Linear(16, 4)
        self.i1, self.i2 = nn.Linear(12, 16), nn.Linear(16, 4)

    def forward(self, query: torch.Tensor, item: torch.Tensor) -> tuple[torch.Tensor, ...]:
        return self.q2(torch.relu(self.q1(query))), self.i2(torch.relu(self.i1(item)))


def test_two_tower_runs_and_equals_its_torch_twin() -> None:
    _, _, code = generate(TWO_TOWER)
    assert "def forward(self, query, item):" in code and "return q, i" in code
    model = load(code).TwoTower()
    twin = _TowerTwin()
    ours = list(model.state_dict().values())
    twin.load_state_dict(dict(zip(twin.state_dict(), ours, strict=True)), strict=True)
    query, item = torch.randn(3, 8), torch.randn(3, 12)
    got, want = model(query, item), twin(query, item)
    assert isinstance(got, tuple) and len(got) == 2
    for a, b in zip(got, want, strict=True):
        torch.testing.assert_close(a, b)


class _EncoderTwin(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embedding = nn.Embedding(50, 8)
        self.dense = nn.Linear(8, 16)

    def forward(
        self, ids: torch.Tensor, mask: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        if mask is None:
            mask = torch.ones_like(ids, dtype=torch.float32)
        h = torch.relu(self.dense(self.embedding(ids)))
        m = mask.unsqueeze(-1)
        return h, (h * m).sum(dim=1) / m.sum(dim=1)


def test_masked_mean_encoder_with_a_default_mask_equals_its_twin() -> None:
    _, _, code = generate(ENCODER)
    assert "def forward(self, ids, mask=None):" in code
    assert "mask = torch.ones_like(ids, dtype=torch.float32)" in code
    assert "h, pooled = self.encoder1(x, mask)" in code
    model = load(code).Net()
    twin = _EncoderTwin()
    twin.load_state_dict(
        dict(zip(twin.state_dict(), model.state_dict().values(), strict=True)), strict=True
    )
    ids = torch.randint(0, 50, (2, 7))
    mask = (torch.rand(2, 7) > 0.3).float()
    mask[:, 0] = 1.0
    for args in ((ids,), (ids, mask)):
        got, want = model(*args), twin(*args)
        for a, b in zip(got, want, strict=True):
            torch.testing.assert_close(a, b)
    # the default is a mask of ones: the same as passing one
    torch.testing.assert_close(model(ids)[1], model(ids, torch.ones(2, 7))[1])
    with pytest.raises(TypeError, match="float32"):
        model(ids, mask.bool())


def test_number_default_fills_with_that_value() -> None:
    _, _, code = generate(
        """
        model Scale:
            input_shape = {x: (3, 4), s: (3, 1)}
            def forward(x, s=0.5):
                return multiply(x, s)
        """
    )
    assert "s = torch.full((x.shape[0], 3, 1), 0.5, dtype=torch.float32, device=x.device)" in code
    model = load(code).Scale()
    x = torch.randn(2, 3, 4)
    torch.testing.assert_close(model(x), x * 0.5)


def test_one_input_models_compile_as_before() -> None:
    _, _, code = generate(
        """
        model Net:
            input_shape = (4,)
            def forward(x):
                return dense(x, 2)
        """
    )
    assert "def forward(self, x):" in code and "return dense1" in code
    assert "is None" not in code


def test_ir_verifier_knows_every_input_and_output() -> None:
    from aurane.ir.verify import IRVerificationError, verify
    from aurane.records import replace

    graph = front(ENCODER).graphs["Net"]
    verify(graph)  # mask is defined before the block call reads it; both outputs exist
    with pytest.raises(IRVerificationError, match="uses mask before definition"):
        verify(replace(graph, input_names=()))
    with pytest.raises(IRVerificationError, match="output nowhere undefined"):
        verify(replace(graph, output_names=(*graph.output_names, "nowhere")))


def test_default_whose_size_no_required_input_has_is_located() -> None:
    found = only_error(
        """
        seq = dim(1, 8)
        model M:
            input_shape = {x: (4,), mask: (seq,)}
            def forward(x, mask=ones):
                return x, mask
        """
    )
    assert found.code == "S154" and "seq" in found.message
    assert where(found) == (4, 25)


def test_the_first_input_cannot_have_a_default() -> None:
    found = only_error("model M:\n    def forward(x=ones, m=zeros):\n        return x\n")
    assert found.code == "P043" and where(found) == (2, 19)


def test_default_read_from_a_shared_symbolic_size() -> None:
    _, _, code = generate(
        """
        seq = dim(1, 16)
        model M:
            input_shape = {x: (seq, 4), mask: (seq,)}
            def forward(x, mask=0):
                return x, mask
        """
    )
    line = "mask = torch.full((x.shape[0], x.shape[1]), 0, dtype=torch.float32, device=x.device)"
    assert line in code
    x = torch.randn(2, 5, 4)
    assert load(code).M()(x)[1].shape == (2, 5)


def test_an_input_never_used_is_a_warning_at_it() -> None:
    found = [
        d
        for d in front(
            """
            model M:
                input_shape = {x: (4,), mask: (4,)}
                def forward(x, mask=ones):
                    return dense(x, 2)
            """
        ).diagnostics
    ]
    assert [(d.code, d.severity) for d in found] == [("S155", "warning")]
    assert "'mask'" in found[0].message and where(found[0]) == (3, 20)


def test_parameterised_block_with_two_inputs_and_outputs() -> None:
    _, _, code = generate(
        """
        model Mix(width):
            def forward(a, b):
                h = dense(a, width)
                return h, add(h, b)

        model Net:
            input_shape = {x: (8,), y: (16,)}
            def forward(x, y):
                h, g = Mix(x, y, 16)
                return h, g
        """
    )
    assert "h, g = self.mix1(x, y)" in code
    net = load(code).Net()
    x, y = torch.randn(3, 8), torch.randn(3, 16)
    h, g = net(x, y)
    torch.testing.assert_close(h, net.mix1.dense1(x))
    torch.testing.assert_close(g, h + y)


def test_repeat_of_a_block_with_several_inputs_is_located() -> None:
    found = only_error(
        """
        model Pair:
            def forward(a, b=zeros):
                return add(a, b)
        model Net:
            input_shape = (4,)
            def forward(x):
                x -> repeat(Pair, 2)
        """
    )
    assert found.code == "S151" and "repeat copies" in found.message
    assert where(found) == (7, 14)


def test_a_long_dict_is_laid_out_one_input_per_line() -> None:
    names = ["input_ids", "attention_mask", "token_type_ids", "position_ids"]
    shapes = ", ".join(f"{name}: (seq,)" for name in names)
    source = (
        "seq = dim(1, 512)\n\nmodel Bert:\n"
        f"    input_shape = {{{shapes}}}\n"
        "    input_dtype = {input_ids: int64,  # ids\n        attention_mask: float32}\n"
        f"    def forward({', '.join(names)}):\n        return input_ids\n"
    )
    once = format_text(source)
    assert "    input_shape = {\n        input_ids: (seq,),\n" in once
    assert "        input_ids: int64,  # ids\n        attention_mask: float32,\n    }\n" in once
    assert format_text(once) == once
    assert strip_spans(parse_program(once)[0]) == strip_spans(parse_program(source)[0])
