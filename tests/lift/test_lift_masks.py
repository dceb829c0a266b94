"""``aurane import`` of what the several-input zoo programs compute their masks, positions
and scores with (issue 26 item 4: BERT, T5 and CLIP round trips): ``ones_like``,
``zeros_like``, ``full_like``, ``ne``, ``&`` of boolean masks (``logical_and``), ``~mask``,
``abs``, a one-sided ``clamp``, ``scaled_dot_product_attention`` with a padding mask or an
additive bias, a scalar parameter, ``a @ b.T`` over the batch (``cross_batch_matmul``),
positions ``arange(n).expand(batch, -1)`` into an embedding, a non-persistent buffer, an
all-true mask made over the batch (``ones``), and whole numbers that keep an integer tensor
integer. Each import is exact (the original's state dict loads strictly, every output agrees
with the original's) and writes the catalog operation."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

torch = pytest.importorskip("torch")
nn = torch.nn
F = torch.nn.functional

from aurane.lift.pipeline import ImportResult, lift_module  # noqa: E402
from aurane.lift.spec import call_recording  # noqa: E402


def _attend(qkv: nn.Linear, h: torch.Tensor, mask: torch.Tensor | None, **options: Any) -> Any:
    """Two heads of attention over ``h`` (B, tokens, 8) with ``mask``."""
    q, k, v = qkv(h).reshape(h.shape[0], -1, 2, 12).transpose(1, 2).chunk(3, dim=-1)
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, **options)


class Apply(nn.Module):
    """A linear layer (a weight to load), then ``fn`` of the module and its output."""

    def __init__(self, fn: Callable[..., torch.Tensor]) -> None:
        super().__init__()
        self.proj = nn.Linear(6, 6)
        self.fn = fn

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # x: (B, 4, 6)
        return self.fn(self, self.proj(x))


def _buckets(m: nn.Module, h: torch.Tensor) -> torch.Tensor:
    """T5's relative buckets in small: integer positions, abs, a one-sided clamp of an
    integer, full_like, lt and where, back to a float for the output."""
    pos = torch.ones_like(h[:, :, 0], dtype=torch.int64).cumsum(1)  # (B, 4)
    rel = pos.unsqueeze(1) - pos.unsqueeze(-1)  # (B, 4, 4)
    n = rel.abs()
    far = (n + torch.full_like(n, 2)).clamp(max=3)
    return h[:, :, :4] * torch.where(n < 1, n, far).float()


class Tokens(nn.Module):
    """Token embeddings, a table of six rows (positions, or a bias of two heads) and a
    two-head attention's projection: what the cases below read their masks into."""

    def __init__(self, width: int = 8) -> None:
        super().__init__()
        self.tokens = nn.Embedding(20, 8)
        self.table = nn.Embedding(6, width)
        self.qkv = nn.Linear(8, 24)


class Padded(Tokens):
    """BERT's padding mask: ``attention_mask != 0`` into attention, position ids from
    ``ones_like(ids).cumsum(1) - 1`` (an integer tensor minus a whole number stays integer)."""

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        positions = torch.ones_like(input_ids, dtype=torch.int64).cumsum(1) - 1
        h = self.tokens(input_ids) + self.table(positions)
        return _attend(self.qkv, h, (attention_mask != 0).unsqueeze(1).unsqueeze(1))


class Biased(Tokens):
    """T5's attention bias: a float mask from a learned table, ``-inf`` where ``~keep``."""

    def __init__(self) -> None:
        super().__init__(width=2)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        bias = self.table(input_ids).permute(0, 2, 1).unsqueeze(2).expand(-1, -1, 6, -1)
        hide = ~(attention_mask != 0).unsqueeze(1).unsqueeze(1)  # (B, 1, 1, 6)
        return _attend(self.qkv, self.tokens(input_ids), bias.masked_fill(hide, -1e4))


class Causal(Tokens):
    """CLIP's text mask: a non-persistent causal buffer ``&`` the padding mask, and
    positions ``arange(6).expand(batch, -1)`` into an embedding."""

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("causal", torch.ones(6, 6, dtype=torch.bool).tril(), False)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        positions = torch.arange(6, device=input_ids.device).expand(input_ids.shape[0], -1)
        h = self.tokens(input_ids) + self.table(positions)
        causal = self.causal.expand(input_ids.shape[0], -1, -1)
        return _attend(self.qkv, h, (causal & (attention_mask != 0).unsqueeze(1)).unsqueeze(1))


class Everything(nn.Module):
    """CLIP's vision mask: every token attends, written as ``ones`` over the batch."""

    def __init__(self) -> None:
        super().__init__()
        self.qkv = nn.Linear(8, 24)

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # x: (B, 5, 8)
        every = torch.ones(x.shape[0], 1, 1, 5, dtype=torch.bool, device=x.device)
        return _attend(self.qkv, x, every)


class Scores(nn.Module):
    """CLIP's logits: a scalar parameter expanded over the batch, ``exp``, and every text
    against every image (``text @ image.T``)."""

    def __init__(self) -> None:
        super().__init__()
        self.text = nn.Linear(6, 4)
        self.image = nn.Linear(6, 4)
        self.scale = nn.Parameter(torch.full((), 2.5))

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # x: (B, 6)
        scale = self.scale.expand(x.shape[0]).exp().unsqueeze(1)
        return (self.text(x) * scale) @ self.image(x).T


IDS = {"input_ids": (6,), "attention_mask": (6,)}
INTEGERS = {"input_ids": "int64", "attention_mask": "int64"}

CASES: dict[str, tuple[Callable[[], nn.Module], Any, Any, list[str]]] = {
    "ones_like-cumsum": (Padded, IDS, INTEGERS, ['ones_like(dtype="int64")', "subtract(1)"]),
    "ne-padding-mask": (Padded, IDS, INTEGERS, ["ne(constant=0.0)", "attn_mask="]),
    "bias-mask": (Biased, IDS, INTEGERS, ["logical_not()", "masked_fill(", "attn_mask="]),
    "and-causal-buffer": (
        Causal,
        IDS,
        INTEGERS,
        ['init="causal_mask"', "persistent=false", "logical_and(", "attn_mask="],
    ),
    "arange-positions": (Causal, IDS, INTEGERS, ["arange(6)", "as table"]),
    "ones-mask": (Everything, (5, 8), None, ['ones(1, 1, 5, dtype="bool")', "attn_mask="]),
    "scalar-parameter": (Scores, (6,), None, ['parameter((), init="full", value=2.5']),
    "cross-batch": (Scores, (6,), None, ["cross_batch_matmul("]),
    "abs-full_like-clamp": (
        lambda: Apply(_buckets),
        (4, 6),
        None,
        ["abs()", "full_like(value=2)", "clamp(max=3)"],
    ),
    "clamp-min": (lambda: Apply(lambda m, h: h.clamp(min=-0.5)), (4, 6), None, ["clamp(min=-0.5)"]),
    "zeros_like": (
        lambda: Apply(lambda m, h: h + torch.zeros_like(h)),
        (4, 6),
        None,
        ["zeros_like()"],
    ),
    "sum-one-axis": (lambda: Apply(lambda m, h: h.sum(dim=(1,))), (4, 6), None, ["sum(dim=1)"]),
}


def _lift(build: Callable[[], nn.Module], shape: Any, dtype: Any) -> ImportResult:
    torch.manual_seed(0)
    model, recorder = call_recording(build)
    return lift_module(model, input_shape=shape, input_dtype=dtype, constructors=recorder.arguments)


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_function_imports_exactly_as_its_operation(name: str) -> None:
    build, shape, dtype, written = CASES[name]
    result = _lift(build, shape, dtype)
    assert result.exact and result.text is not None, result.problem
    assert all(text in result.text for text in written), result.text


def test_a_bitwise_not_of_integers_is_a_gap_not_logical_not() -> None:
    """``~x`` of integers is ``-x - 1``: never mapped to ``logical_not``."""
    result = _lift(lambda: Apply(lambda m, h: h * (~(h > 0).long()).float()), (4, 6), None)
    assert not result.exact
    assert any("bitwise not of integers" in gap.why for gap in result.gaps), result.gaps


class Dropped(nn.Module):
    """Attention dropout that only training mode shows (``p if self.training else 0.0``,
    as BERT writes it), after a batch norm whose statistics a training forward would move."""

    def __init__(self) -> None:
        super().__init__()
        self.norm = nn.BatchNorm1d(5)
        self.qkv = nn.Linear(8, 24)

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # x: (B, 5, 8)
        return _attend(self.qkv, self.norm(x), None, dropout_p=0.25 if self.training else 0.0)


def test_attention_dropout_of_training_mode_is_written_and_the_module_left_as_it_was() -> None:
    torch.manual_seed(0)
    model, recorder = call_recording(Dropped)
    before = {k: v.clone() for k, v in model.state_dict().items()}
    result = lift_module(model, input_shape=(5, 8), constructors=recorder.arguments)
    assert result.exact and result.text is not None, result.problem
    assert "dropout=0.25" in result.text, result.text
    assert not model.training
    after = model.state_dict()
    assert all(torch.equal(before[k], after[k]) for k in before)  # running stats restored


class Tied(nn.Module):
    """The zoo's T5 tables: two embeddings tied to a ``shared`` one that ``forward`` never
    looks up (a strict load still needs ``shared.weight``)."""

    def __init__(self) -> None:
        super().__init__()
        self.shared = nn.Embedding(20, 8)
        self.encoder = nn.Embedding(20, 8)
        self.decoder = nn.Embedding(20, 8)
        self.encoder.weight = self.shared.weight
        self.decoder.weight = self.shared.weight
        self.proj = nn.Linear(8, 4)

    def forward(self, input_ids: torch.Tensor, decoder_ids: torch.Tensor) -> torch.Tensor:
        return self.proj(self.encoder(input_ids) + self.decoder(decoder_ids))


def test_embeddings_tied_to_a_table_never_looked_up_keep_it() -> None:
    result = _lift(Tied, {"input_ids": (6,), "decoder_ids": (6,)}, None)
    assert result.exact and result.text is not None, result.problem
    text = result.text
    assert "as shared" in text and text.count("tie=shared") == 2, text
    assert text.index("as shared") < text.index("tie=shared"), text  # before its first tie


class Inner(nn.Module):
    def __init__(self, table: nn.Embedding) -> None:
        super().__init__()
        self.emb = nn.Embedding(20, 8)
        self.emb.weight = table.weight
        self.proj = nn.Linear(8, 8)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.proj(self.emb(ids))


class TiedAcross(nn.Module):
    """An embedding inside a block tied to its caller's, which ``tie=`` cannot reach."""

    def __init__(self) -> None:
        super().__init__()
        self.shared = nn.Embedding(20, 8)
        self.inner = Inner(self.shared)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.shared(ids) + self.inner(ids)


def test_an_embedding_tie_no_path_reaches_is_written_untied() -> None:
    result = _lift(TiedAcross, (6,), "int64")
    assert result.exact and result.text is not None, result.problem
    assert "tie=" not in result.text and "as emb" in result.text, result.text
