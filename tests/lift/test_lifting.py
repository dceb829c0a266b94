"""How ``aurane import`` rebuilds a module, on small hand-written modules: parameter names
from the constructor, ``.residual`` for a trailing residual only some instances have,
learned tensors (a class token, a layer scale), several outputs, and located gaps for what
the language cannot say (a batch folded into a sample axis, a layer called twice, a
convolution that pads by reflection)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
nn = torch.nn

from aurane.lift.pipeline import ImportResult, lift_module  # noqa: E402
from aurane.lift.spec import SpecError, call_recording, parse_spec  # noqa: E402
from tests.lift.models import Unit  # noqa: E402


def _lift(builder: type, shape: tuple[int, ...], *args: object, **options: object) -> ImportResult:
    torch.manual_seed(0)
    model, recorder = call_recording(builder, *args)
    return lift_module(model, input_shape=shape, constructors=recorder.arguments, **options)  # type: ignore[arg-type]


def _exact(result: ImportResult) -> str:
    assert result.exact and result.text is not None, result.problem
    return result.text


class Inverted(nn.Module):
    """MobileNet's block: the residual only where the shape is kept."""

    def __init__(self, channels: int, out: int, expand: int) -> None:
        super().__init__()
        hidden = channels * expand
        self.use_res = channels == out
        self.conv = nn.Sequential(
            nn.Conv2d(channels, hidden, 1, bias=False),
            nn.BatchNorm2d(hidden),
            nn.ReLU6(),
            nn.Conv2d(hidden, out, 1, bias=False),
            nn.BatchNorm2d(out),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.conv(x) if self.use_res else self.conv(x)


class Stack(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.Sequential(Inverted(4, 8, 2), Inverted(8, 8, 3), Inverted(8, 8, 3))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.blocks(x)


def test_instances_of_one_class_share_a_block_named_from_the_constructor() -> None:
    text = _exact(_lift(Stack, (4, 6, 6)))
    assert "model Inverted(out, expand):" not in text  # named by value, not by guess
    assert text.count("model Inverted") == 1, text
    assert "as conv" in text and "Inverted(" in text
    # the trailing residual of the shape-keeping instances moves to their calls
    assert text.count(".residual as blocks.") == 2, text
    assert "add(" not in text.split("model Stack")[0], text


class Tokens(nn.Module):
    """ViT's input: patches, a class token, learned positions, a layer scale."""

    def __init__(self, width: int = 8) -> None:
        super().__init__()
        self.patch = nn.Conv2d(3, width, 4, stride=4)
        self.class_token = nn.Parameter(torch.randn(1, 1, width))
        self.positions = nn.Parameter(torch.randn(1, 5, width))
        self.scale = nn.Parameter(torch.full((width,), 0.5))
        self.head = nn.Linear(width, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n = x.shape[0]
        h = self.patch(x).flatten(2).transpose(1, 2)
        h = torch.cat([self.class_token.expand(n, -1, -1), h], dim=1) + self.positions
        return self.head(h[:, 0] * self.scale)


def test_learned_tensors_keep_their_names_and_shapes() -> None:
    text = _exact(_lift(Tokens, (3, 8, 8)))
    assert "parameter((1, 8)" in text and "as class_token" in text
    assert "parameter((5, 8)" in text and "as positions" in text
    assert 'parameter((8,), init="full", value=0.5, batch_axis=false) as scale' in text
    assert "select(" in text and "dim=1, index=0" in text


class TwoHeads(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.body = nn.Linear(6, 6)
        self.extra = nn.Linear(6, 2)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h = self.body(x)
        return h, self.extra(h)


def test_several_outputs_are_all_returned_unless_one_is_asked() -> None:
    result = _lift(TwoHeads, (6,))
    text = _exact(result)
    assert result.output_names == ["0", "1"] and result.dropped_outputs == []
    assert "return output_0, output_1" in text
    chosen = _lift(TwoHeads, (6,), output="0")
    assert chosen.output_names == ["0"] and chosen.dropped_outputs == ["1"]
    assert not chosen.exact and "extra" in (chosen.check.problem or "")  # a weight unused


class Folded(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(x.view(-1, 4))  # (batch * 3, 4): the batch folded into the rows


class Twice(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(self.fc(x))


class Reflect(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1, padding_mode="reflect")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


@pytest.mark.parametrize(
    ("builder", "shape", "path", "what", "why"),
    [
        (Folded, (3, 4), "", "Tensor.view", "folds the batch axis"),
        (Twice, (4,), "fc", "nn.Linear", "applied twice"),
        (Reflect, (3, 8, 8), "conv", "Conv2d(padding_mode='reflect')", "pad with zeros only"),
    ],
    ids=["batch-folded", "shared-layer", "reflect-padding"],
)
def test_what_cannot_be_written_is_a_located_gap(
    builder: type, shape: tuple[int, ...], path: str, what: str, why: str
) -> None:
    result = _lift(builder, shape)
    assert not result.exact and result.text is None and result.failure is None
    gap = result.gaps[0]
    assert (gap.path, gap.what) == (path, what) and why in gap.why, gap
    assert gap.where is not None and gap.where.split(":")[0].endswith("test_lifting.py")


def test_spec_forms() -> None:
    spec = parse_spec("torchvision.models:vit_b_16(image_size=64, num_classes=10)")
    assert (spec.module, spec.attribute) == ("torchvision.models", "vit_b_16")
    assert dict(spec.kwargs) == {"image_size": 64, "num_classes": 10}
    assert parse_spec("pkg.mod:Outer.Inner(3, (1, 2))").args == (3, (1, 2))
    for bad in ("resnet50", "torchvision.models:", "a b:c", "m:f(x=open('/'))", "m:f(**k)"):
        with pytest.raises(SpecError):
            parse_spec(bad)


def test_a_module_fx_cannot_trace_goes_through_torch_export() -> None:
    """nn.TransformerEncoderLayer branches on its input's sizes (its fast path), which
    symbolic tracing cannot follow: torch.export does, and its attention folds back into
    one multihead_attention layer."""
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(16, 2, 32, batch_first=True)
    result = lift_module(layer, input_shape=(5, 16))
    text = _exact(result)
    assert result.tracer == "export" and any("torch.export" in n for n in result.notes)
    assert "multihead_attention(x, heads=2, dim=16, dropout=0.1) as self_attn" in text


class Skipped(nn.Module):
    """Two numbered calls of one block whose first result is read again (a U-Net level's
    skip connection): not a ``repeat``, which keeps only its last result."""

    def __init__(self) -> None:
        super().__init__()
        self.layers = nn.ModuleList([Unit(6), Unit(6)])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        skip = self.layers[0](x)
        return self.layers[1](skip) + skip


def test_a_result_read_again_is_not_swallowed_by_a_repeat() -> None:
    text = _exact(_lift(Skipped, (6,)))
    assert "repeat(" not in text
    assert "as layers.0" in text and "as layers.1" in text


class Shifted(nn.Module):
    """A unit of two inputs (a ResnetBlock2D and its time embedding)."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(6, 6)

    def forward(self, x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.fc(x)) + t


class Level(nn.Module):
    """A U-Net level: two units in a row, both results returned (the skips)."""

    def __init__(self) -> None:
        super().__init__()
        self.first = Shifted()
        self.second = Shifted()

    def forward(self, x: torch.Tensor, t: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        a = self.first(x, t)
        return a, self.second(a, t)


class Levels(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Linear(6, 6)
        self.level = Level()
        self.fc = nn.Linear(6, 6)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a, b = self.level(x, self.embed(x))
        return self.fc(a) - b


def test_a_block_result_returned_at_the_end_keeps_its_name() -> None:
    """The second unit's result once took the first's name (both ``h``, returned ``h, h``):
    a value returned at the end stays live to the return."""
    text = _exact(_lift(Levels, (6,)))
    assert "return h, h\n" not in text, text
