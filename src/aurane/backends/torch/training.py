"""The template of a standard training job (SPEC §7): one readable ``train_<model>`` function.

The loop (epochs, batches, forward, loss, backward, step, validation) is written out, as
in nanoGPT's ``train.py``; the infrastructure around it (run folders, resume, checkpoints,
the step budget, history, lock, interrupts, summary) is the runtime's ``rt.Run``
(``aurane.runtime``). A line starting with ``[flag]`` is kept only when ``flag`` is set
(``[!flag]`` when it is not; ``[a&b]`` when both are); ``$name`` placeholders are filled
by ``jobs.py`` with already-rendered Python source.

Flags: ``val``, ``test``, ``evals`` (validation every N steps through ``validate()``),
``sched``/``step_sched``/``epoch_sched``/``plateau_sched``, ``budget`` (a schedule sized
from the run's length), ``amp`` (autocast), ``scaler`` (fp16's gradient scaler), ``clip``,
``accum`` (``accumulate`` > 1), ``compile``, ``channels``, ``check``/``check_train``,
``feed`` (samples of several fields, ``rt.Feed``),
``wrap`` (``strategy = "fsdp"`` or ``activation_checkpointing``: the blocks' wrapping),
``fsdp`` (``strategy = "fsdp"``: the blocks are sharded before the model moves, so FSDP
moves one block at a time and a device never holds the whole model).
"""

from __future__ import annotations

TRAIN_TEMPLATE = '''\
def $name(
    train_loader=None, validation_loader=None, model=None, resume_from=None, test_loader=None
):
    """$doc

    Returns the model with ``model.training_history`` (one dict per epoch) and
    ``model.test_metrics``; ``resume_from`` is a run folder or a checkpoint file.
    """
    device = rt.setup(seed=$seed, device=$device)
    if train_loader is None:
        train_loader = $make_train(seed=$seed)
[val]    if validation_loader is None:
[val]        validation_loader = $make_val(seed=$seed)
[test]    if test_loader is None:
[test]        test_loader = $make_test(seed=$seed)
    if model is None:
        model = $model_class()
[fsdp]$wrap
    rt.to_device(model, device)
[channels]    model = model.to(memory_format=torch.channels_last)  # channels_last = true
[!fsdp&wrap]$wrap
$loss
$optimizer
[budget]$budget
[sched]$scheduler
[amp]$amp
$stats
[evals]$val_stats
[evals]
[evals]    def validate():  # every $eval_every steps, and after each epoch
[evals]$validate
[evals]
[check]$data_check
[feed]$feed
$run
        net = $net
[!val]        net.train()
        for epoch in run.epochs():
[val]            net.train()  # the validation pass below leaves the model in eval mode
            stats.reset()
[!feed]            for inputs, targets in run.batches(train_loader, stats):
[feed]            for batch in run.batches(train_loader, stats):
[feed]                inputs, targets = feed(batch, device, $train_what)
[check_train]                data_check($train_what, inputs, targets)
[!feed]                inputs = inputs.to(device, non_blocking=True$memory_format)
[!feed]                targets = targets.to(device, non_blocking=True)
[!accum]$forward
[!accum]                loss = loss_fn(outputs, targets)
[!accum]                optimizer.zero_grad(set_to_none=True)
[!accum&scaler]                scaler.scale(loss).backward()
[!accum&scaler&clip]                scaler.unscale_(optimizer)  # clip the true gradients, not the scaled ones
[!accum&!scaler]                loss.backward()
[!accum&clip]                torch.nn.utils.clip_grad_norm_(model.parameters(), $clip)
[!accum&scaler]                scaler.step(optimizer)
[!accum&scaler]                scaler.update()
[!accum&!scaler]                optimizer.step()
[!accum&step_sched]                scheduler.step()  # warmup_cosine advances every optimizer step
[accum]                with run.accumulating(net):  # DDP syncs gradients on a step's last batch
[accum]$forward
[accum]                    loss = loss_fn(outputs, targets)
[accum&scaler]                    scaler.scale(loss * run.share).backward()  # its share of the step
[accum&!scaler]                    (loss * run.share).backward()  # its share of the step's samples
[accum]                if run.stepping:  # every $accumulate batches, and an epoch's last
[accum&scaler&clip]                    scaler.unscale_(optimizer)  # clip the true gradients
[accum&clip]                    torch.nn.utils.clip_grad_norm_(model.parameters(), $clip)
[accum&scaler]                    scaler.step(optimizer)
[accum&scaler]                    scaler.update()
[accum&!scaler]                    optimizer.step()
[accum]                    optimizer.zero_grad(set_to_none=True)
[accum&step_sched]                    scheduler.step()  # warmup_cosine advances every optimizer step
                stats.update(outputs.detach(), targets, loss.detach())
            scores = stats.compute($train_what)
[val]$val_call
[epoch_sched]            scheduler.step()
[plateau_sched]            scheduler.step($plateau_value)
$end_epoch
[test]$test_call
        return run.finish($finish_args)'''

# The forward pass, at the loop's indentation (``$forward``; ``accum`` adds one level).
FORWARD = """\
outputs, targets = rt.match_target(net(inputs), targets, $task)"""
# a model that returns several outputs: the one the loss reads (``output = NAME``)
FORWARD_PICK = """\
outputs = net(inputs)$pick
outputs, targets = rt.match_target(outputs, targets, $task)"""
FORWARD_AMP = """\
with torch.autocast(device.type, dtype=amp_dtype, enabled=amp_dtype is not None):
    outputs = net(inputs)$pick
# the loss runs in float32 (BCELoss refuses half precision)
outputs, targets = rt.match_target(outputs.to(torch.float32), targets, $task)"""
