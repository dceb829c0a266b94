"""The template of a standard training job (SPEC §7): one readable ``train_<model>`` function.

The loop (epochs, batches, forward, loss, backward, step, validation) is written out; the
infrastructure around it (resume, checkpoints, history, lock, interrupts, summary) is the
runtime's ``rt.Run`` (``aurane.runtime``). A line starting with ``[flag]`` is kept only when
``flag`` is set (``[!flag]`` when it is not); ``$name`` placeholders are filled by
``jobs.py`` with already-rendered Python source.
"""

from __future__ import annotations

TRAIN_TEMPLATE = '''\
def $name(
    train_loader=None, validation_loader=None, model=None, resume_from=None, test_loader=None
):
    """$doc

    Returns the model with ``model.training_history`` (one dict per epoch) and
    ``model.test_metrics``; ``resume_from`` is a checkpoint file or its folder.
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
    rt.to_device(model, device)
$loss
$optimizer
[sched]$scheduler
[amp]    # mixed_precision: CUDA autocast with a gradient scaler; full precision elsewhere
[amp]    amp_dtype = $amp_dtype if device.type == "cuda" else None
[amp]    scaler = torch.amp.GradScaler("cuda", enabled=amp_dtype == torch.float16)
$stats
[check]$data_check
$run
        net = rt.distribute(model, device)
[!val]        net.train()
        for epoch in run.epochs():
[val]            net.train()  # the validation pass below leaves the model in eval mode
            stats.reset()
            for inputs, targets in run.batches(train_loader, stats.running_loss):
[check_train]                data_check($train_what, inputs, targets)
                inputs = inputs.to(device, non_blocking=True)
                targets = targets.to(device, non_blocking=True)
[amp]                with torch.autocast(device.type, dtype=amp_dtype, enabled=amp_dtype is not None):
[amp]                    outputs = net(inputs)
[amp]                # the loss runs in float32 (BCELoss refuses half precision)
[amp]                outputs, targets = rt.match_target(outputs.to(torch.float32), targets, $task)
[!amp]                outputs, targets = rt.match_target(net(inputs), targets, $task)
                loss = loss_fn(outputs, targets)
                optimizer.zero_grad(set_to_none=True)
[amp]                scaler.scale(loss).backward()
[amp&clip]                scaler.unscale_(optimizer)  # clip the true gradients, not the scaled ones
[!amp]                loss.backward()
[clip]                torch.nn.utils.clip_grad_norm_(model.parameters(), $clip)
[amp]                scaler.step(optimizer)
[amp]                scaler.update()
[!amp]                optimizer.step()
[step_sched]                scheduler.step()  # warmup_cosine advances every optimizer step
                stats.update(outputs.detach(), targets, loss.detach())
            scores = stats.compute($train_what)
[val]$val_call
[epoch_sched]            scheduler.step()
[plateau_sched]            scheduler.step($plateau_value)
$end_epoch
[test]$test_call
        return run.finish($finish_args)'''
