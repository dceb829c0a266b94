"""Issue 10 items 1 and 2 end to end: parameterised blocks, ``as`` names and weight tying,
against hand-written PyTorch twins (strict ``load_state_dict``, equal outputs in eval mode)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from tests.backends.torch.util import generate, load

RESNET = """
model BasicBlock(width, stride: int = 1):
    def forward(x):
        h = conv2d(x, width, kernel=3, stride=stride, padding=1, bias=false) as conv1
        h = batchnorm(h).relu as bn1
        h = conv2d(h, width, kernel=3, padding=1, bias=false) as conv2
        h = batchnorm(h) as bn2
        return relu(add(h, x))

model DownBlock(width):
    def forward(x):
        h = x -> conv2d(width, kernel=3, stride=2, padding=1, bias=false) as conv1
              -> batchnorm().relu as bn1
        h = h -> conv2d(width, kernel=3, padding=1, bias=false) as conv2 -> batchnorm() as bn2
        s = (x -> conv2d(width, kernel=1, stride=2, bias=false) -> batchnorm()) as downsample
        return relu(add(h, s))

model Net:
    input_shape = (3, 16, 16)
    def forward(x):
        x -> conv2d(16, kernel=3, padding=1, bias=false) as conv1 -> batchnorm().relu as bn1
        x -> repeat(BasicBlock(16), 2) as layer1
        x -> DownBlock(32) as layer2.0 -> BasicBlock(32) as layer2.1
        x -> global_avg_pool() -> dense(10) as fc
"""


class TwinBasic(nn.Module):
    def __init__(self, cin: int, width: int, stride: int = 1) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(cin, width, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.conv2 = nn.Conv2d(width, width, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = F.relu(self.bn1(self.conv1(x)))
        return F.relu(self.bn2(self.conv2(h)) + x)


class TwinDown(TwinBasic):
    def __init__(self, cin: int, width: int) -> None:
        super().__init__(cin, width, stride=2)
        self.downsample = nn.Sequential(
            nn.Conv2d(cin, width, 1, stride=2, bias=False), nn.BatchNorm2d(width)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = F.relu(self.bn1(self.conv1(x)))
        return F.relu(self.bn2(self.conv2(h)) + self.downsample(x))


class TwinNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(16)
        self.layer1 = nn.Sequential(TwinBasic(16, 16), TwinBasic(16, 16))
        self.layer2 = nn.Sequential(TwinDown(16, 32), TwinBasic(32, 32))
        self.fc = nn.Linear(32, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.relu(self.bn1(self.conv1(x)))
        x = self.layer2(self.layer1(x))
        return self.fc(x.mean(dim=(2, 3)))


def _randomize_buffers(model: nn.Module) -> None:
    generator = torch.Generator().manual_seed(1)
    for module in model.modules():
        if isinstance(module, nn.BatchNorm2d):
            module.running_mean.copy_(torch.randn(module.num_features, generator=generator))
            module.running_var.copy_(torch.rand(module.num_features, generator=generator) + 0.5)


def test_resnet_like_program_loads_the_twins_state_dict_and_computes_the_same() -> None:
    fe, _, code = generate(RESNET)
    # one class per block, not one per call; constructor arguments as written
    assert code.count("class BasicBlock(nn.Module)") == 1 and "BasicBlock_2" not in code
    assert "def __init__(self, in_channels, width, stride=1):" in code
    assert "self.layer2 = nn.Sequential(DownBlock(16, 32), BasicBlock(32, 32))" in code
    torch.manual_seed(0)
    twin = TwinNet()
    _randomize_buffers(twin)
    model = load(code).Net()
    assert set(model.state_dict()) == set(twin.state_dict())
    assert "layer2.0.downsample.0.weight" in model.state_dict()
    assert "layer1.1.bn2.running_mean" in model.state_dict()
    model.load_state_dict(twin.state_dict(), strict=True)
    model.eval()
    twin.eval()
    x = torch.randn(2, 3, 16, 16)
    with torch.no_grad():
        torch.testing.assert_close(model(x), twin(x), rtol=1e-5, atol=1e-6)
    total = sum(p.numel() for p in twin.parameters())
    assert fe.graphs["Net"].parameters == total


def test_gradients_flow_through_parameterised_blocks() -> None:
    _, _, code = generate(RESNET)
    model = load(code).Net()
    model(torch.randn(2, 3, 16, 16)).sum().backward()
    assert all(p.grad is not None for p in model.parameters())


NANOGPT_NAMES = """
model MLP(width):
    def forward(x):
        x -> dense(4 * width) as c_fc -> gelu() -> dense(width) as c_proj

model LM:
    input_shape = (8,)
    input_dtype = int64
    def forward(idx):
        h = embedding(idx, 50, 16) as transformer.wte
        h -> MLP(16) as transformer.h.0 -> MLP(16) as transformer.h.1
        h = layer_norm(h) as transformer.ln_f
        return dense(h, 50, bias=false, tie=transformer.wte) as lm_head
"""


class TwinMLP(nn.Module):
    def __init__(self, width: int) -> None:
        super().__init__()
        self.c_fc = nn.Linear(width, 4 * width)
        self.c_proj = nn.Linear(4 * width, width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.c_proj(F.gelu(self.c_fc(x)))


class TwinLM(nn.Module):
    """nanoGPT's layout: a ModuleDict ``transformer`` and a tied ``lm_head``."""

    def __init__(self) -> None:
        super().__init__()
        self.transformer = nn.ModuleDict(
            dict(
                wte=nn.Embedding(50, 16),
                h=nn.ModuleList([TwinMLP(16), TwinMLP(16)]),
                ln_f=nn.LayerNorm(16),
            )
        )
        self.lm_head = nn.Linear(16, 50, bias=False)
        self.transformer.wte.weight = self.lm_head.weight

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        h = self.transformer.wte(idx)
        for block in self.transformer.h:
            h = block(h)
        return self.lm_head(self.transformer.ln_f(h))


def test_nanogpt_names_and_tied_embedding() -> None:
    fe, _, code = generate(NANOGPT_NAMES)
    assert "self.lm_head.weight = self.transformer.wte.weight" in code
    torch.manual_seed(0)
    twin = TwinLM()
    model = load(code).LM()
    assert model.lm_head.weight is model.transformer.wte.weight
    assert list(model.state_dict()) == list(twin.state_dict())
    model.load_state_dict(twin.state_dict(), strict=True)
    idx = torch.randint(0, 50, (2, 8))
    with torch.no_grad():
        torch.testing.assert_close(model(idx), twin(idx), rtol=1e-5, atol=1e-6)
    # the shared table is counted once, as nn.Module.parameters() does
    total = sum(p.numel() for p in model.parameters())
    assert total == sum(p.numel() for p in twin.parameters())
    assert fe.graphs["LM"].parameters == total
    tied = next(n for n in fe.graphs["LM"].nodes if n.layer == "lm_head")
    assert tied.parameters == 0
    assert fe.graphs["LM"].tied == {tied.id: "transformer.wte"}
    assert fe.graphs["LM"].to_json()["tied"] == {tied.id: "transformer.wte"}


def test_tied_weight_is_one_tensor_during_training() -> None:
    _, _, code = generate(NANOGPT_NAMES)
    model = load(code).LM()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model(torch.randint(0, 50, (2, 8))).sum().backward()
    optimizer.step()
    assert model.lm_head.weight is model.transformer.wte.weight


def test_dense_can_tie_to_a_dense_layer_of_the_same_shape() -> None:
    fe, _, code = generate(
        """
        model AE:
            input_shape = (6,)
            def forward(x):
                x -> dense(6, bias=false) as enc -> dense(6, tie=enc) as dec
        """
    )
    model = load(code).AE()
    assert model.dec.weight is model.enc.weight
    assert fe.graphs["AE"].parameters == sum(p.numel() for p in model.parameters()) == 42


def test_a_named_sequential_is_called_whole() -> None:
    _, _, code = generate(RESNET)
    assert "s = self.downsample(x)  # (batch, width, 8, 8)" in code
    assert "x = self.layer2(x)" in code
    assert "self.downsample[0]" not in code and "self.layer2[1]" not in code


def test_sequential_children_used_elsewhere_are_called_one_by_one() -> None:
    _, _, code = generate(
        """
        model Net:
            input_shape = (8,)
            def forward(x):
                a = dense(x, 8) as blk.0
                b = dense(a, 8) as blk.1
                return add(a, b)
        """
    )
    assert "self.blk = nn.Sequential(nn.Linear(8, 8), nn.Linear(8, 8))" in code
    assert "a = self.blk[0](x)" in code and "self.blk[1](a)" in code
    assert "self.blk(x)" not in code


def test_named_chain_with_activation_modules_matches_applying_its_children() -> None:
    _, _, code = generate(
        """
        model Net:
            input_shape = (8,)
            def forward(x):
                return (x -> dense(8).relu -> dense(4).leaky_relu(0.1)) as seq
        """
    )
    assert "nn.LeakyReLU(negative_slope=0.1)" in code and "self.seq(x)" in code
    model = load(code).Net()
    x = torch.randn(3, 8)
    seq = model.seq
    expected = F.leaky_relu(seq[2](F.relu(seq[0](x))), 0.1)
    torch.testing.assert_close(model(x), expected)


def test_profile_counts_a_tied_weight_once_and_rolls_up_blocks() -> None:
    from aurane.analysis.profile import profile

    fe, _, code = generate(NANOGPT_NAMES)
    model = load(code).LM()
    assert profile(fe.graphs["LM"]).parameters == sum(p.numel() for p in model.parameters())
    fe, _, code = generate(RESNET)
    net = load(code).Net()
    assert profile(fe.graphs["Net"]).parameters == sum(p.numel() for p in net.parameters())


def test_a_module_dict_with_numbered_keys_is_indexed_by_strings() -> None:
    """torchvision's CNBlock.block: children 0, 2, 3 (1 is a parameterless Permute)."""
    fe, _, code = generate(
        """
        model Net:
            input_shape = (4, 5, 5)
            def forward(x):
                h = conv2d(x, 4, kernel=3, padding=1, groups=4) as block.0
                h = permute(h, 0, 2, 3, 1)
                h = layer_norm(h) as block.2
                h = dense(h, 6) as block.3
                return permute(h, 0, 3, 1, 2)
        """
    )
    assert 'h = self.block["0"](x)' in code and 'self.block["3"](' in code
    assert "self.block[0]" not in code

    twin = nn.Module()
    twin.block = nn.ModuleDict(
        {"0": nn.Conv2d(4, 4, 3, padding=1, groups=4), "2": nn.LayerNorm(4), "3": nn.Linear(4, 6)}
    )
    model = load(code).Net().eval()
    model.load_state_dict(twin.state_dict(), strict=True)
    x = torch.randn(2, 4, 5, 5)
    b = twin.block
    expected = b["3"](b["2"](b["0"](x).permute(0, 2, 3, 1))).permute(0, 3, 1, 2)
    torch.testing.assert_close(model(x), expected)
    assert fe.graphs["Net"].parameters == sum(p.numel() for p in twin.parameters())


def test_a_parameter_inside_a_named_container_makes_it_a_plain_module() -> None:
    """torchvision ViT's ``encoder.pos_embedding`` beside ``encoder.ln``."""
    _, _, code = generate(
        """
        model Net:
            input_shape = (3, 4)
            def forward(x):
                pos = parameter((3, 4), init="normal") as encoder.pos_embedding
                h = add(x, pos)
                return layer_norm(h) as encoder.ln
        """
    )
    assert "self.encoder = nn.Module()" in code
    assert "self.encoder.pos_embedding = nn.Parameter(" in code
    assert "self.encoder.ln = nn.LayerNorm(4)" in code
    model = load(code).Net().eval()
    keys = {"encoder.pos_embedding": (1, 3, 4), "encoder.ln.weight": (4,), "encoder.ln.bias": (4,)}
    assert {k: tuple(v.shape) for k, v in model.state_dict().items()} == keys
    x = torch.randn(2, 3, 4)
    enc = model.encoder
    expected = F.layer_norm(x + enc.pos_embedding, (4,), enc.ln.weight, enc.ln.bias)
    torch.testing.assert_close(model(x), expected)


def test_a_container_holding_a_parameter_refuses_numbered_children() -> None:
    from tests.helpers import only_error, where

    error = only_error(
        """
model Net:
    input_shape = (3, 4)
    def forward(x):
        pos = parameter((3, 4)) as encoder.pos_embedding
        return dense(add(x, pos), 4) as encoder.0
"""
    )
    assert error.code == "S045", error
    assert where(error) == (5, 41), error
    assert "holds the parameter 'encoder.pos_embedding'" in error.message


def test_a_spliced_block_holding_a_buffer_is_refused_not_reached_by_index() -> None:
    """Fuzz seed 85000017: ``*Rep0() as rs2.*`` put a buffer at ``rs2.0.0``; check accepted
    it and forward read ``self.rs2[0][0]`` (``'Module' object is not subscriptable``)."""
    from tests.helpers import only_error, where

    error = only_error(
        """
model Rep0:
    def forward(x):
        h = buffer(3, value=none)
        return add(x, h)

model Net:
    input_shape = (3,)
    def forward(x):
        x -> *Rep0() as rs2.*
        return x
"""
    )
    assert error.code == "S045", error
    assert where(error) == (9, 25), error
    assert "'rs2.0' holds the buffer 'rs2.0.0'" in error.message


def test_a_container_holding_a_buffer_under_a_word_runs() -> None:
    _, _, code = generate(
        """
model Net:
    input_shape = (3,)
    def forward(x):
        h = buffer(3, value=none) as stats.mean
        return dense(add(x, h), 3) as stats.proj
"""
    )
    model = load(code).Net().eval()
    assert sorted(model.state_dict()) == ["stats.mean", "stats.proj.bias", "stats.proj.weight"]
    x = torch.randn(2, 3)
    torch.testing.assert_close(model(x), model.stats.proj(x))


NAMED_RUN = """
model Net:
    input_shape = (3, 8, 8)
    def forward(x):
        x -> conv2d(4, kernel=3, padding=1) as stem.conv -> batchnorm() as stem.norm
          -> relu() as stem.act
        x -> conv2d(4, kernel=1) as body.a.first -> conv2d(4, kernel=1) as body.a.second
          -> conv2d(4, kernel=1) as body.b
        x -> conv2d(4, kernel=1) as head.x -> relu() -> conv2d(2, kernel=1) as head.y
"""


def test_named_container_applied_whole_is_a_sequential_of_named_children() -> None:
    """``stem.conv``, ``stem.norm``, ``stem.act`` applied one after the other (and ``body``'s
    nested ``a``) are an ``nn.Sequential`` of named children called whole, as torchvision's
    DenseNet ``features``; ``head``, whose layers an unnamed relu separates, stays an
    ``nn.ModuleDict`` called by name. The state dict keys are the names either way."""
    _, _, code = generate(NAMED_RUN)
    assert "from collections import OrderedDict" in code
    assert "self.stem = nn.Sequential(" in code and "self.head = nn.ModuleDict(" in code
    assert "x = self.stem(x)" in code and "x = self.body(x)" in code
    assert "self.head.x(x)" in code
    module = load(code)
    torch.manual_seed(0)
    net = module.Net().eval()
    assert isinstance(net.body.a, nn.Sequential)
    assert list(net.state_dict())[:2] == ["stem.conv.weight", "stem.conv.bias"]
    assert "body.a.second.weight" in net.state_dict()
    x = torch.randn(2, 3, 8, 8)
    h = F.relu(net.stem.norm(net.stem.conv(x)))
    h = net.body.b(net.body.a.second(net.body.a.first(h)))
    h = net.head.y(F.relu(net.head.x(h)))
    torch.testing.assert_close(net(x), h)


def test_named_container_whose_children_interleave_is_not_called_whole() -> None:
    """``body.a.first``, ``body.b``, ``body.a.second``: an ``nn.Sequential`` would run
    ``a`` whole before ``b``, so ``body`` stays an ``nn.ModuleDict`` called layer by layer."""
    _, _, code = generate(
        """
model Net:
    input_shape = (3, 8, 8)
    def forward(x):
        x -> conv2d(4, kernel=1) as body.a.first -> conv2d(5, kernel=1) as body.b
          -> conv2d(6, kernel=1) as body.a.second
"""
    )
    assert "self.body = nn.ModuleDict(" in code and "self.body(" not in code
    net = load(code).Net().eval()
    x = torch.randn(2, 3, 8, 8)
    expected = net.body.a.second(net.body.b(net.body.a.first(x)))
    torch.testing.assert_close(net(x), expected)
