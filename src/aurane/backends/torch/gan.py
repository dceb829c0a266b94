"""Templates and emission for adversarial training jobs (SPEC §8).

The discriminator phase sees detached fakes (generated under ``no_grad``); the generator
phase freezes the discriminator's parameters and restores its running statistics, so
only the generator learns from it. Samples come from one fixed noise batch.
"""

from __future__ import annotations

from typing import Any

# By their own paths: the package's __init__ imports this module (through jobs).
import aurane.backends.torch.data_check as data_check
import aurane.backends.torch.data_emit as data_emit
from aurane.backends.torch.data_emit import (
    Experiment,
    block_fields,
    field_literal,
    format_literal,
    quote,
    read_option,
)
from aurane.backends.torch.runtime import fill
from aurane.ir.graph import Graph
from aurane.semantics import config as catalog
from aurane.syntax import ast

GAN_TEMPLATE = '''\
def $name(train_loader=None, generator=None, discriminator=None, resume_from=None):
    """$doc

    Returns ``(generator, discriminator)``; the generator carries ``training_history``
    (generator_loss, discriminator_loss, real_score, fake_score per epoch).
    """
    discriminator_steps, generator_steps = $d_steps, $g_steps  # updates per batch
    device = rt.setup(seed=$seed, device=$device)
    if train_loader is None:
        train_loader = $make_train(seed=$seed)
    if generator is None:
        generator = $generator_class()
    if discriminator is None:
        discriminator = $discriminator_class()
    rt.to_device(generator, device)
    rt.to_device(discriminator, device)
$g_optimizer
$d_optimizer
$g_loss
$d_loss
    noise_shape = $noise_shape  # the generator's input_shape
[samples]    sample_shape = $sample_shape  # what the generator makes per sample
[samples]    generate_samples_every = $every_samples  # epochs
[samples]    rt.check_sample_shape(sample_shape, $sample_format)
    # Fixed noise from its own generator: the same samples every epoch, and after a resume.
    noise_source = torch.Generator().manual_seed($noise_seed)
    fixed_noise = torch.randn(($num_samples, *noise_shape), generator=noise_source)
    fixed_noise = fixed_noise.to(device, $noise_dtype)

    def running_loss():  # the progress bar's figure: the epoch's generator loss so far
        return float(totals[3]) / max(sums["g_count"], 1)

[check]$data_check
$run
        g_net = rt.distribute(generator, device)
        d_net = rt.distribute(discriminator, device)
        for epoch in run.epochs():
            generator.train()
            discriminator.train()
            sums = {"count": 0, "g_count": 0}
            totals = torch.zeros(4, dtype=torch.float64, device=device)
            for batch in run.batches(train_loader, running_loss):
[check]                data_check($check_what, rt.real_batch(batch), None)
                real = rt.real_batch(batch).to(device, $noise_dtype, non_blocking=True)
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
[clip]                    torch.nn.utils.clip_grad_norm_(discriminator.parameters(), $clip)
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
                frozen = rt.freeze(discriminator)
                for _ in range(generator_steps):
                    noise = torch.randn((size, *noise_shape), device=device, dtype=$noise_dtype)
                    g_optimizer.zero_grad(set_to_none=True)
                    judged = discriminator(g_net(noise))
                    g_loss = g_loss_fn(judged, torch.ones_like(judged))
                    g_loss.backward()
[clip]                    torch.nn.utils.clip_grad_norm_(generator.parameters(), $clip)
                    g_optimizer.step()
                    totals[3] += g_loss.detach().double() * size
                    sums["g_count"] += size
                rt.unfreeze(discriminator, frozen)
$gan_scores
[samples]            if epoch % generate_samples_every == 0:
[samples]                generator.eval()  # running statistics, not this batch's, for the samples
[samples]                with torch.no_grad():
[samples]                    images = generator(fixed_noise)
[samples]                generator.train()
[samples]                rt.save_samples(images, $save_dir, epoch, $sample_format, $sample_range)
            run.end_epoch(epoch, scores)
        return run.finish(generator, discriminator)'''

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
    program: ast.AuraneProgram | None = None,
) -> str:
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
    ckpt = data_emit.add_checkpointing(fields, {}, name, flags)
    noise_dtype = gen.input_dtype if gen.input_dtype in catalog.FLOAT_DTYPES else gen.param_dtype
    dataset = stmt.dataset.id
    generator, discriminator = class_names[stmt.generator.id], class_names[stmt.discriminator.id]
    title = f"Train {generator} against {discriminator} on {dataset}"
    values.update(data_emit.job_values(name, title, epochs, experiment, dataset))
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
        save_dir=f"run.output({quote(field_literal(fields, 'save_dir', './samples'))})",
        sample_format=quote(sample_format),
        sample_range=format_literal(
            tuple(field_literal(fields, "sample_range", _sample_range(gen)))
        ),
        gan_scores="\n".join(
            data_emit.format_call(
                "scores = rt.gan_scores",
                ["totals", "sums", "epoch", quote(f"training data {dataset!r}")],
                12,
            )
        ),
    )
    values.update(lines)
    disc = graphs.get(stmt.discriminator.id)
    if program is not None and disc is not None and data_check.unknown_datasets(program, [dataset]):
        # real batches are cast to the noise's dtype, so only their shape is checked
        check = data_check.batch_check(stmt.discriminator.id, disc, check_dtype=False)
        if check is not None:
            flags.add("check")
            values.update(data_check=check, check_what=quote(f"training data {dataset!r}"))
    state = {
        "generator": "generator",
        "discriminator": "discriminator",
        "generator_optimizer": "g_optimizer",
        "discriminator_optimizer": "d_optimizer",
    }
    extra = ['monitor="generator_loss"', *data_emit.log_every_args(fields)]
    values["run"] = data_emit.run_call(
        name, "gan", config, state, ["train_loader"], ckpt, epochs, extra
    )
    return fill(GAN_TEMPLATE, flags, values)
