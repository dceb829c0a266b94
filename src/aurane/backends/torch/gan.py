"""Templates and emission for adversarial training jobs (SPEC §8).

The discriminator phase sees detached fakes (generated under ``no_grad``); the generator
phase freezes the discriminator's parameters and restores its running statistics, so
only the generator learns from it. Samples come from one fixed noise batch.
"""

from __future__ import annotations

from typing import Any

from aurane.backends.torch import data_emit
from aurane.backends.torch.data_emit import (
    Experiment,
    block_fields,
    field_literal,
    format_literal,
    quote,
    read_option,
)
from aurane.backends.torch.runtime import JOB_HELPERS, Helper, fill
from aurane.ir.graph import Graph
from aurane.semantics import config as catalog
from aurane.syntax import ast

FREEZE = '''\
def _freeze(model):
    """Stop ``model`` learning in the other player's phase: no gradients, same statistics."""
    flags = [parameter.requires_grad for parameter in model.parameters()]
    model.requires_grad_(False)
    return flags, [buffer.clone() for buffer in model.buffers()]


def _unfreeze(model, frozen):
    flags, buffers = frozen
    for parameter, flag in zip(model.parameters(), flags, strict=True):
        parameter.requires_grad_(flag)
    with torch.no_grad():
        for buffer, saved in zip(model.buffers(), buffers, strict=True):
            buffer.copy_(saved)  # running statistics as they were before the phase'''

SAMPLES = '''\
def _real_batch(batch):
    """The images of a batch: (input, target) pairs give their inputs."""
    return batch[0] if isinstance(batch, (list, tuple)) else batch


def _check_sample_shape(shape, sample_format):
    if sample_format != "tensor" and (len(shape) != 3 or shape[0] not in (1, 3)):
        raise ValueError(
            f"sample_format {sample_format!r} writes PNG image grids, which need generator "
            f"outputs of shape (1 or 3, height, width), not {tuple(shape)}; use 'tensor'"
        )


def _save_samples(images, folder, epoch, sample_format, value_range):
    """samples_NNNN.pt and/or samples_NNNN.png (a grid) for one epoch's fixed-noise batch."""
    if not _is_main_process():
        return
    images = images.detach().to("cpu", torch.float32)
    stem = os.path.join(folder, f"samples_{epoch:04d}")
    if sample_format in ("tensor", "both"):
        _save_file(stem + ".pt", images)
    if sample_format in ("png", "both"):
        _write_png(stem + ".png", _image_grid(images, value_range))


def _image_grid(images, value_range, padding=2):
    """(N, C, H, W) floats in ``value_range`` to one (H', W', C) uint8 grid, near square."""
    low, high = value_range
    pixels = ((images - low) / (high - low)).clamp(0, 1).mul(255).round().to(torch.uint8)
    count, channels, height, width = pixels.shape
    columns = math.ceil(math.sqrt(count))
    rows = math.ceil(count / columns)
    grid = torch.zeros(
        (rows * (height + padding) + padding, columns * (width + padding) + padding, channels),
        dtype=torch.uint8,
    )
    for index in range(count):
        top = padding + (index // columns) * (height + padding)
        left = padding + (index % columns) * (width + padding)
        grid[top : top + height, left : left + width] = pixels[index].permute(1, 2, 0)
    return grid


def _write_png(path, grid):
    """A minimal PNG encoder (8-bit grey or RGB), so samples need no imaging library."""
    height, width, channels = grid.shape
    rows = b"".join(b"\\x00" + bytes(grid[row].flatten().tolist()) for row in range(height))

    def chunk(kind, data):
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", width, height, 8, 0 if channels == 1 else 2, 0, 0, 0)
    png = b"\\x89PNG\\r\\n\\x1a\\n" + chunk(b"IHDR", header)
    png += chunk(b"IDAT", zlib.compress(rows, 9)) + chunk(b"IEND", b"")
    temporary = path + ".tmp"
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(temporary, "wb") as handle:
        handle.write(png)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, path)'''

HELPERS: dict[str, Helper] = {
    "_freeze": (FREEZE, (), ("import torch",)),
    "_save_samples": (
        SAMPLES,
        ("_is_main_process", "_save_checkpoints"),
        ("import math", "import os", "import struct", "import torch", "import zlib"),
    ),
}

GAN_TEMPLATE = '''\
def $name(train_loader=None, generator=None, discriminator=None, resume_from=None):
    """$doc

    Returns ``(generator, discriminator)``; the generator carries ``training_history``
    (generator_loss, discriminator_loss, real_score, fake_score per epoch).
    """
    epochs = $epochs
    discriminator_steps, generator_steps = $d_steps, $g_steps  # updates per batch
$config
    device = _setup(seed=$seed, device=$device)
    if train_loader is None:
        train_loader = $make_train(seed=$seed)
    if generator is None:
        generator = $generator_class()
    if discriminator is None:
        discriminator = $discriminator_class()
    generator.to(device)
    discriminator.to(device)
$g_optimizer
$d_optimizer
$g_loss
$d_loss
    noise_shape = $noise_shape  # the generator's input_shape
[samples]    sample_shape = $sample_shape  # what the generator makes per sample
[samples]    generate_samples_every = $every_samples  # epochs
[samples]    _check_sample_shape(sample_shape, $sample_format)
    # Fixed noise from its own generator: the same samples every epoch, and after a resume.
    noise_source = torch.Generator().manual_seed($noise_seed)
    fixed_noise = torch.randn(($num_samples, *noise_shape), generator=noise_source)
    fixed_noise = fixed_noise.to(device, $noise_dtype)
    history = []
    fingerprint = _fingerprint(config, generator, discriminator)
    versions = {"aurane": $version, "torch": str(torch.__version__)}
    loaders = [train_loader]
    best = math.inf
    first_epoch = 1
    if resume_from is not None:
$load_call
        generator.load_state_dict(checkpoint["generator"])
        discriminator.load_state_dict(checkpoint["discriminator"])
        g_optimizer.load_state_dict(checkpoint["generator_optimizer"])
        d_optimizer.load_state_dict(checkpoint["discriminator_optimizer"])
        history, best = checkpoint["history"], checkpoint["best"]
        _restore_rng(checkpoint["rng"], loaders)
        first_epoch = checkpoint["epoch"] + 1
    g_net = _distribute(generator, device)
    d_net = _distribute(discriminator, device)
[ckpt]
[ckpt]    def checkpoint_state(epoch):
[ckpt]        return {
[ckpt]            "format": _CHECKPOINT_FORMAT,
[ckpt]            "kind": "gan",
[ckpt]            "job": $job_name,
[ckpt]            "versions": versions,
[ckpt]            "fingerprint": fingerprint,
[ckpt]            "epoch": epoch,
[ckpt]            "generator": generator.state_dict(),
[ckpt]            "discriminator": discriminator.state_dict(),
[ckpt]            "generator_optimizer": g_optimizer.state_dict(),
[ckpt]            "discriminator_optimizer": d_optimizer.state_dict(),
[ckpt]            "history": history,
[ckpt]            "best": best,
[ckpt]            "rng": _rng_state(loaders),
[ckpt]        }
[ckpt]
[ckpt]    if resume_from is None:  # a run killed during its first epoch still leaves last.pt
[ckpt]$first_save

    def running_loss():  # the progress bar's figure: the epoch's generator loss so far
        return float(totals[3]) / max(sums["g_count"], 1)

    for epoch in range(first_epoch, epochs + 1):
        started = time.monotonic()
        generator.train()
        discriminator.train()
        _set_epoch(train_loader, epoch)
        sums = {"count": 0, "g_count": 0}
        totals = torch.zeros(4, dtype=torch.float64, device=device)
        progress = _Progress(f"epoch {epoch}/{epochs}", train_loader, running_loss)
        for batch in train_loader:
            real = _real_batch(batch).to(device, $noise_dtype, non_blocking=True)
            size = real.shape[0]
            for _ in range(discriminator_steps):
                # Discriminator phase: fakes made without a graph, so G gets no gradient.
                noise = torch.randn((size, *noise_shape), device=device, dtype=$noise_dtype)
                with torch.no_grad():
                    fake = generator(noise)
                d_optimizer.zero_grad(set_to_none=True)
                real_out = d_net(real)
                d_loss_real = d_loss_fn(real_out, torch.ones_like(real_out))
                d_loss_real.backward()
                fake_out = d_net(fake)
                d_loss_fake = d_loss_fn(fake_out, torch.zeros_like(fake_out))
                d_loss_fake.backward()
[clip]                torch.nn.utils.clip_grad_norm_(discriminator.parameters(), $clip)
                d_optimizer.step()
                scores = torch.stack(
                    [
                        (d_loss_real + d_loss_fake).detach().double(),
                        $score(real_out.detach()).mean().double(),
                        $score(fake_out.detach()).mean().double(),
                    ]
                )
                totals[:3] += scores * size
                sums["count"] += size
            # Generator phase: D is frozen (parameters and running statistics); the bare
            # module is called, so DDP never waits for gradients a frozen D cannot give.
            frozen = _freeze(discriminator)
            for _ in range(generator_steps):
                noise = torch.randn((size, *noise_shape), device=device, dtype=$noise_dtype)
                g_optimizer.zero_grad(set_to_none=True)
                judged = discriminator(g_net(noise))
                g_loss = g_loss_fn(judged, torch.ones_like(judged))
                g_loss.backward()
[clip]                torch.nn.utils.clip_grad_norm_(generator.parameters(), $clip)
                g_optimizer.step()
                totals[3] += g_loss.detach().double() * size
                sums["g_count"] += size
            _unfreeze(discriminator, frozen)
            progress.step()
        progress.close()
        counts = torch.tensor([sums["count"], sums["g_count"]], dtype=torch.float64, device=device)
        if dist.is_initialized():
            dist.all_reduce(totals)
            dist.all_reduce(counts)
        if counts[0] == 0:
            raise ValueError($empty_message)
        d_loss, real_score, fake_score = (totals[:3] / counts[0]).tolist()
        g_loss = float(totals[3] / counts[1])
        if not (math.isfinite(d_loss) and math.isfinite(g_loss)):
            raise FloatingPointError(
                f"non-finite GAN loss in epoch {epoch} (generator {g_loss}, "
                f"discriminator {d_loss}); lower the learning rates or set gradient_clip"
            )
        row = {
            "epoch": epoch,
            "generator_loss": g_loss,
            "discriminator_loss": d_loss,
            "real_score": real_score,
            "fake_score": fake_score,
        }
        history.append(row)
[save_best]        improved = g_loss < best
        best = min(best, g_loss)
[samples]        if epoch % generate_samples_every == 0:
[samples]            generator.eval()  # running statistics, not this batch's, for the samples
[samples]            with torch.no_grad():
[samples]                images = generator(fixed_noise)
[samples]            generator.train()
[samples]            _save_samples(images, $save_dir, epoch, $sample_format, $sample_range)
[ckpt]$save_call
        _log(_epoch_line(row, epochs, time.monotonic() - started))
    generator.training_history = history
    discriminator.training_history = history
    return generator, discriminator'''

GAN_HELPERS = (*JOB_HELPERS, "_freeze")
_SCORES = {"bce": "", "bce_with_logits": "torch.sigmoid", "mse": ""}


def _sample_range(graph: Graph) -> tuple[float, float]:
    """Default PNG range from the generator's last activation: sigmoid (0, 1), else (-1, 1)."""
    last = next((n for n in graph.nodes if n.output == graph.output), None)
    return (0.0, 1.0) if last is not None and last.op == "sigmoid" else (-1.0, 1.0)


def emit_gan(
    stmt: ast.TrainGan,
    name: str,
    graphs: dict[str, Graph],
    class_names: dict[str, str],
    experiment: Experiment,
) -> tuple[str, set[str]]:
    fields = block_fields(stmt.fields, catalog.GAN_TABLE)
    epochs = int(field_literal(fields, "epochs", 1))
    gen = graphs[stmt.generator.id]
    lines: dict[str, str] = {}
    config: dict[str, Any] = {
        "generator": stmt.generator.id,
        "discriminator": stmt.discriminator.id,
    }
    for role, short in (("generator", "g"), ("discriminator", "d")):
        expr = fields.get(f"{role}_optimizer", ast.Name("adam", stmt.span))
        option = read_option(expr, catalog.OPTIMIZER_TABLE)
        source, used = data_emit.optimizer_source(
            option, field_literal(fields, "lr"), f"{role}.parameters()", f"{short}_optimizer", 4
        )
        lines[f"{short}_optimizer"] = "\n".join(source)
        loss = read_option(
            fields.get(f"{role}_loss", ast.Name("bce", stmt.span)), catalog.LOSS_TABLE
        )
        lines[f"{short}_loss"] = "\n".join(data_emit.loss_source(loss, f"{short}_loss_fn", 4))
        config[f"{role}_optimizer"] = [option.name, used]
        config[f"{role}_loss"] = [loss.name, loss.kwargs]
    d_loss = config["discriminator_loss"][0]
    flags: set[str] = set()
    values: dict[str, str] = {}
    data_emit.add_clip(fields, flags, values, config)
    steps = {
        key: int(field_literal(fields, f"{key}_steps", 1)) for key in ("discriminator", "generator")
    }
    config["steps"] = [steps["discriminator"], steps["generator"]]
    sample_keys = ("generate_samples_every", "num_samples", "save_dir", "sample_format")
    if any(key in fields for key in sample_keys):
        flags.add("samples")
    sample_format = field_literal(fields, "sample_format", "png")
    ckpt = data_emit.add_checkpointing(fields, {}, name, flags, values)
    if ckpt is not None and ckpt[2]:
        flags.add("save_best")
    noise_dtype = gen.input_dtype if gen.input_dtype in catalog.FLOAT_DTYPES else gen.param_dtype
    dataset = stmt.dataset.id
    generator, discriminator = class_names[stmt.generator.id], class_names[stmt.discriminator.id]
    title = f"Train {generator} against {discriminator} on {dataset}"
    values.update(data_emit.job_values(name, title, epochs, config, experiment, dataset))
    values.update(
        generator_class=generator,
        discriminator_class=discriminator,
        noise_shape=format_literal(gen.input_value.sample_shape),
        sample_shape=format_literal(gen.output_value.sample_shape),
        noise_dtype=f"torch.{noise_dtype or 'float32'}",
        num_samples=repr(int(field_literal(fields, "num_samples", 16))),
        noise_seed=repr(experiment.seed if experiment.seed is not None else 0),
        d_steps=repr(steps["discriminator"]),
        g_steps=repr(steps["generator"]),
        score=_SCORES.get(d_loss, ""),
        every_samples=repr(int(field_literal(fields, "generate_samples_every", 1))),
        save_dir=quote(field_literal(fields, "save_dir", "./samples")),
        sample_format=quote(sample_format),
        sample_range=format_literal(
            tuple(field_literal(fields, "sample_range", _sample_range(gen)))
        ),
        empty_message=quote(f"training data {dataset!r} produced no batches; check size and batch"),
    )
    values.update(lines)
    entries = ("generator", "discriminator", "generator_optimizer", "discriminator_optimizer")
    values["load_call"] = data_emit.load_call("gan", (*entries, "best"))
    helpers = set(GAN_HELPERS) | ({"_save_samples"} if "samples" in flags else set())
    return fill(GAN_TEMPLATE, flags, values), helpers
