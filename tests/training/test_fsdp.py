"""Issue 27: ``strategy = "fsdp"`` (FSDP2 per block), ``activation_checkpointing``, sharded
checkpoints, and launches on one and two "nodes" of this machine (gloo, CPU).

A tiny zoo-style GPT (nanoGPT's block, tied output weights, no dropout) trains the same
weights in one process (batch 8) and in two (batch 4 each, the samples in order): DDP, FSDP
and FSDP with activation checkpointing. The torchrun launches take about 10 s each on two
cores; the tests share them where they can.
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import torch

from aurane.runtime.sharded import SHARDED_FOLDER, sharded_folder
from tests.helpers import front
from tests.shared_run import run_once
from tests.training.helpers import compile_text, env, job_here, write_program
from tests.training.programs import TINY_GPT

FSDP = '    strategy = "fsdp"\n'
CHECKPOINTING = "    activation_checkpointing = true\n"
TORCHRUN = [sys.executable, "-m", "torch.distributed.run"]
# float32 sums in another order (two processes' halves, then their mean), through 8 steps
TOLERANCE = {"rtol": 1e-5, "atol": 1e-6}


def _program(batch: int = 4, epochs: int = 2, folder: str = "ck", extra: str = "") -> str:
    return TINY_GPT.format(batch=batch, epochs=epochs, folder=folder, extra=extra)


def _torchrun(folder: Path, *args: str, timeout: float = 240, **extra: str) -> Any:
    done = subprocess.run(
        [*TORCHRUN, *args],
        cwd=folder,
        env=env(OMP_NUM_THREADS="1", AURANE_PLOT="0", **extra),
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    return done


def _close(first: dict[str, torch.Tensor], second: dict[str, torch.Tensor], what: str) -> None:
    assert first.keys() == second.keys(), what
    for key in first:
        torch.testing.assert_close(first[key], second[key], **TOLERANCE, msg=f"{what}: {key}")


def _losses(history: list[dict[str, Any]]) -> list[float]:
    return [row["loss"] for row in history]


# -- the generated code ----------------------------------------------------------------


def test_fsdp_code_is_a_few_readable_lines_more_than_ddp() -> None:
    ddp = compile_text(_program())
    every = FSDP + CHECKPOINTING + '    fsdp_precision = "bf16"\n    cpu_offload = true\n'
    fsdp = compile_text(_program(extra=every))
    added = len(fsdp.splitlines()) - len(ddp.splitlines())
    assert 0 < added <= 15, added  # the bound
    assert added == 6, added
    expected = [
        '    # strategy = "fsdp": FSDP2 shards each block, then the rest, each moved to the device',
        "    for block in rt.blocks(model, Block):",
        "        rt.checkpoint_activations(block)  # activation_checkpointing: recomputed in backward",
        '        rt.fully_shard(block, device, precision="bf16", cpu_offload=True)',
        '    rt.fully_shard(model, device, precision="bf16", cpu_offload=True)',
        "    rt.to_device(model, device)",  # after: FSDP moved the shards it keeps
    ]
    lines = fsdp.splitlines()
    start = lines.index(expected[0])
    assert lines[start : start + len(expected)] == expected
    # the wrapping comes before the optimizer sees the (sharded) parameters
    assert start < next(i for i, line in enumerate(lines) if "optimizer = torch.optim" in line)
    assert "        sharded=rt.ShardedCheckpoints()," in lines  # checkpoints in DCP folders
    assert "        net = model  # sharded by FSDP above" in lines  # no DDP wrapper
    standalone = compile_text(_program(extra=FSDP + CHECKPOINTING), standalone=True)
    assert "def _fully_shard(" in standalone and "def _blocks(" in standalone
    imports = [line for line in standalone.splitlines() if line.startswith(("import", "from"))]
    assert not [line for line in imports if "aurane" in line], imports


def test_activation_checkpointing_alone_and_a_model_without_blocks() -> None:
    alone = compile_text(_program(extra=CHECKPOINTING))
    assert "rt.checkpoint_activations(block)" in alone and "rt.fully_shard" not in alone
    flat = """
experiment E:
    seed = 1
dataset points:
    from aurane.data.SyntheticImages
    size = 8
    image_size = (1, 4, 4)
    num_classes = 2
    batch = 4
model Net:
    input_shape = (1, 4, 4)
    def forward(x):
        x -> flatten() -> dense(2)
train Net on points:
    strategy = "fsdp"
"""
    code = compile_text(flat)
    assert '    # strategy = "fsdp": Net calls no block, so it is one FSDP unit' in code
    assert "    rt.fully_shard(model, device)" in code and "rt.blocks" not in code


def test_fsdp_options_need_the_fsdp_strategy_and_strategies_are_named() -> None:
    result = front(_program(extra='    cpu_offload = true\n    fsdp_precision = "bf16"\n'))
    found = [(d.code, d.message) for d in result.diagnostics if d.is_error]
    assert [code for code, _ in found] == ["S130", "S130"]
    assert "cpu_offload is an option of FSDP, but the job's strategy is 'ddp'" in found[0][1]
    channels = front(_program(extra=FSDP + "    channels_last = true\n"))
    found = [(d.code, d.message) for d in channels.diagnostics if d.is_error]
    assert found == [
        (
            "S130",
            "channels_last cannot be sharded: FSDP2 shards contiguous parameters only, "
            "and channels-last convolution weights are not",
        )
    ]
    unknown = front(_program(extra='    strategy = "zero3"\n'))
    messages = [d.message for d in unknown.diagnostics if d.is_error]
    assert len(messages) == 1 and "'ddp', 'fsdp'" in messages[0], messages


def test_blocks_finds_each_copy_and_checkpointing_keeps_names_and_gradients() -> None:
    from aurane.runtime.sharding import blocks, checkpoint_activations

    namespace: dict[str, Any] = {}
    exec(compile_text(_program()), namespace)  # noqa: S102 - the generated program
    torch.manual_seed(0)
    model = namespace["GPT"]()
    found = blocks(model, namespace["Block"])
    assert found == list(model.h)  # each copy of repeat(Block(), 2)
    plain = namespace["GPT"]()
    plain.load_state_dict(model.state_dict())
    for block in found:
        checkpoint_activations(block)
    assert list(model.state_dict()) == list(plain.state_dict())
    tokens = torch.randint(0, 32, (2, 8))
    for net in (model, plain):
        net(tokens).square().mean().backward()
    for (name, ours), theirs in zip(model.named_parameters(), plain.parameters(), strict=True):
        assert ours.grad is not None and theirs.grad is not None
        torch.testing.assert_close(ours.grad, theirs.grad, msg=name)


# -- one process, DDP, FSDP, FSDP + activation checkpointing ---------------------------

# One torchrun launch (after the killed one, below) trains for both tests that need two
# processes: this test's jobs, then the SIGKILL test's uninterrupted and resumed runs.
# tests/shared_run.py runs the two launches once per session.
EQUAL_DRIVER = """
import os
import torch
from torch.distributed.checkpoint.state_dict import StateDictOptions, get_model_state_dict
import job_ddp, job_fsdp, job_fsdp_ac, job_fsdp_more, job_fsdp_bf16, job_fsdp3
import job_whole, job_split
whole = StateDictOptions(full_state_dict=True, cpu_offload=True)
def keep(model, name):
    weights = get_model_state_dict(model, options=whole)  # gathered from the shards
    if os.environ["RANK"] == "0":
        torch.save({"weights": weights, "history": model.training_history}, name + ".pt")
for job in (job_ddp, job_fsdp, job_fsdp_ac, job_fsdp_more, job_fsdp_bf16):
    keep(job.train_gpt(), job.__name__)
# an ordinary (DDP) checkpoint continued under FSDP: each process takes its shards
keep(job_fsdp3.train_gpt(resume_from="ck_ddp/run_0001/last.pt"), "job_fsdp3")
# the SIGKILL test's runs: uninterrupted, and resumed from the killed run's last.pt
keep(job_whole.train_gpt(), "whole")
keep(job_split.train_gpt(resume_from="ck_split"), "resumed")
job_ddp.rt.finish_distributed()
# the results are saved and the group is gone: leave without interpreter finalization, where
# gloo's worker threads can still abort the process (SIGABRT, pytorch/pytorch#179291)
import sys
sys.stdout.flush()
sys.stderr.flush()
os._exit(0)
"""


def _one_process() -> dict[str, Any]:
    """This process's part, outside torch.distributed: one process's run, the sharded run
    read by export/verify's loader, refused by a program without the strategy, and a third
    epoch of the two FSDP processes' run and of this process's own, each continued here.
    Returns what the test compares, as the torchrun driver's files hold it."""
    from aurane.runtime import CheckpointError
    from aurane.trained import load_trained

    def job(name: str, **fields: Any) -> dict[str, Any]:
        return job_here(_program(**fields), name)

    def kept(model: Any) -> dict[str, Any]:
        return {"weights": model.state_dict(), "history": model.training_history}

    one = job("job_one", batch=8, folder="ck_one")
    one3 = job("job_one3", batch=8, epochs=3, folder="ck_one3")
    one3_fsdp = job("job_one3_fsdp", batch=8, epochs=3, folder="ck_one3", extra=FSDP)
    results: dict[str, Any] = {"one": kept(one["train_gpt"]())}
    # export and verify read a sharded checkpoint's weights as they read any other
    net = one["GPT"]()
    assert load_trained(net, "GPT", "ck_fsdp/run_0001/last.pt") == "model"
    results["trained"] = net.state_dict()
    # a program without the strategy cannot read the shards, and says what to do
    with pytest.raises(CheckpointError) as refused:
        one3["train_gpt"](resume_from="ck_fsdp/run_0001")
    results["refused"] = str(refused.value)
    # the run of two FSDP processes continues in one process (no torch.distributed), and
    # so does this process's own: a third epoch each
    results["from_fsdp"] = kept(one3_fsdp["train_gpt"](resume_from="ck_fsdp/run_0001"))
    results["from_one"] = kept(one3["train_gpt"](resume_from="ck_one"))
    return results


def _launches(folder: Path) -> None:
    """The killed two-process run, then EQUAL_DRIVER's launch; each one's exit status and
    output in a .json file, and what the kill left (last.pt, the shard folders) copied."""
    for name, extra in (
        ("ddp", ""),
        ("fsdp", FSDP),
        ("fsdp_ac", FSDP + CHECKPOINTING),
        ("fsdp_bf16", FSDP + '    fsdp_precision = "bf16"\n'),
    ):
        write_program(folder, _program(folder=f"ck_{name}", extra=extra), f"job_{name}")
    # CPU offload (on the CPU: the same arithmetic) and accumulate = 2 batches of 2
    more = FSDP + CHECKPOINTING + "    cpu_offload = true\n    accumulate = 2\n"
    write_program(folder, _program(batch=2, folder="ck_fsdp_more", extra=more), "job_fsdp_more")
    write_program(folder, _program(epochs=3, folder="ck_fsdp3", extra=FSDP), "job_fsdp3")
    every = FSDP + "    checkpoint_every_steps = 3\n"
    write_program(folder, _program(folder="ck_whole", extra=every), "job_whole")
    # the interrupted run is the --standalone program (the shards' code copied in): its
    # checkpoints and weights are the default program's
    split = _program(folder="ck_split", extra=every)
    write_program(folder, split, "job_split", standalone=True)
    # the third sharded save (step 4, epoch 1's end) is killed on both processes after
    # their shards are written and before last.pt names them: last.pt stays at step 3
    killed = _torchrun(
        folder,
        "--standalone",
        "--nproc-per-node=2",
        "job_split.py",
        AURANE_KILL_AT="sharded:written@3",
    )
    _keep_outcome(folder / "killed.json", killed)
    run = folder / "ck_split" / "run_0001"
    if (run / "last.pt").is_file():  # as the kill left it, before the resume changes it
        shutil.copyfile(run / "last.pt", folder / "killed_last.pt")
        left = sorted(p.name for p in (run / SHARDED_FOLDER).iterdir())
        (folder / "killed_left.json").write_text(json.dumps(left))
    (folder / "driver.py").write_text(EQUAL_DRIVER)
    done = _torchrun(folder, "--standalone", "--nproc-per-node=2", "driver.py")
    _keep_outcome(folder / "driver.json", done)


def _keep_outcome(path: Path, done: Any) -> None:
    path.write_text(json.dumps([done.returncode, done.stdout, done.stderr]))


def _outcome(path: Path) -> tuple[int, str]:
    """A launch's exit status and its output, stdout then stderr."""
    code, out, err = json.loads(path.read_text())
    return code, out + err


@pytest.fixture(scope="module")
def launches(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return run_once(tmp_path_factory, "fsdp_launches", _launches)


def test_one_process_ddp_fsdp_and_checkpointing_train_equal_weights(
    launches: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tmp_path = launches
    code, output = _outcome(tmp_path / "driver.json")
    assert code == 0, output
    # the sharded run keeps DCP folders beside a .pt file that names them
    run = tmp_path / "ck_fsdp" / "run_0001"
    last = torch.load(run / "last.pt", weights_only=True)
    folder = sharded_folder(last["model"])
    assert folder is not None and folder.startswith(f"{SHARDED_FOLDER}/step_00000008-")
    assert sharded_folder(last["optimizer"]) == folder and (run / folder / ".metadata").is_file()
    assert [p.name for p in (run / SHARDED_FOLDER).iterdir()] == [folder.split("/")[1]]
    monkeypatch.chdir(tmp_path)
    alone = _one_process()
    refused = alone["refused"]
    assert 'its model and optimizer are sharded (written with strategy = "fsdp"); ' in refused
    assert "aurane checkpoint consolidate ck_fsdp/run_0001/last.pt -o model.pt" in refused
    # continued in one process, the run's last.pt is an ordinary one; no shards are left
    last = torch.load(run / "last.pt", weights_only=True)
    assert last["epoch"] == 3 and sharded_folder(last["model"]) is None
    assert not list((run / SHARDED_FOLDER).iterdir())

    saved = {name: torch.load(tmp_path / f"job_{name}.pt") for name in ("ddp", "fsdp")}
    saved["one"] = alone["one"]
    for name in ("fsdp_ac", "fsdp_more", "fsdp_bf16"):
        saved[name] = torch.load(tmp_path / f"job_{name}.pt")
    one = saved["one"]
    assert len(one["history"]) == 2 and one["history"][1]["loss"] < one["history"][0]["loss"]
    # bfloat16 parameters and compute (FSDP's mixed precision): close, not equal
    assert _losses(saved["fsdp_bf16"]["history"]) == pytest.approx(
        _losses(one["history"]), rel=0.01
    )
    bf16 = saved["fsdp_bf16"]["weights"]
    assert all(value.dtype == torch.float32 for value in bf16.values())  # the kept weights
    assert not all(torch.equal(bf16[key], one["weights"][key]) for key in bf16)
    for name in ("ddp", "fsdp", "fsdp_ac", "fsdp_more"):
        assert _losses(saved[name]["history"]) == pytest.approx(_losses(one["history"]), rel=1e-6)
        _close(one["weights"], saved[name]["weights"], name)
    # export/verify's loader gathers the same weights
    _close(saved["fsdp"]["weights"], alone["trained"], "load_trained")
    # a third epoch: from two FSDP processes' shards in one process, from one process's
    # own checkpoint, and from DDP's ordinary checkpoint under FSDP (two processes)
    reference = alone["from_one"]
    for name in ("from_fsdp", "job_fsdp3"):
        other = alone[name] if name in alone else torch.load(tmp_path / f"{name}.pt")
        assert _losses(other["history"]) == pytest.approx(_losses(reference["history"]), rel=1e-6)
        _close(reference["weights"], other["weights"], name)


NCCL_DRIVER = """
import os
import torch
from torch.distributed.checkpoint.state_dict import StateDictOptions, get_model_state_dict
import job_ddp, job_fsdp
whole = StateDictOptions(full_state_dict=True, cpu_offload=True)
for job in (job_ddp, job_fsdp):
    model = job.train_gpt()
    weights = get_model_state_dict(model, options=whole)
    if os.environ["RANK"] == "0":
        torch.save({"weights": weights, "history": model.training_history}, job.__name__ + ".pt")
job_ddp.rt.finish_distributed()
# the results are saved and the group is gone: leave without interpreter finalization, where
# gloo's worker threads can still abort the process (SIGABRT, pytorch/pytorch#179291)
import sys
sys.stdout.flush()
sys.stderr.flush()
os._exit(0)
"""


@pytest.mark.skipif(
    not torch.cuda.is_available() or torch.cuda.device_count() < 2,
    reason="NCCL needs a CUDA device per process, two here (this machine has fewer)",
)
def test_the_same_program_on_cuda_runs_fsdp_with_nccl(tmp_path: Path) -> None:
    """Issue 27 item 2: with ``device = "cuda"`` the generated file joins an NCCL group
    (``rt.setup``) and FSDP trains the weights DDP does."""
    for name, extra in (("ddp", ""), ("fsdp", FSDP)):
        text = _program(folder=f"ck_{name}", extra=extra)
        assert 'device = "cpu"' in text
        write_program(tmp_path, text.replace('device = "cpu"', 'device = "cuda"'), f"job_{name}")
    (tmp_path / "driver.py").write_text(NCCL_DRIVER)
    done = _torchrun(tmp_path, "--standalone", "--nproc-per-node=2", "driver.py")
    assert done.returncode == 0, done.stdout + done.stderr
    ddp, fsdp = (torch.load(tmp_path / f"job_{name}.pt") for name in ("ddp", "fsdp"))
    assert _losses(fsdp["history"]) == pytest.approx(_losses(ddp["history"]), rel=1e-4)
    for key, value in ddp["weights"].items():
        torch.testing.assert_close(fsdp["weights"][key], value, rtol=1e-4, atol=1e-5, msg=key)


def test_consolidate_writes_an_ordinary_checkpoint(tmp_path: Path) -> None:
    """``aurane checkpoint consolidate``: a sharded checkpoint written by this process
    (DCP without a process group) becomes one file torch loads with weights_only."""
    from aurane.runtime.checkpoint import CheckpointError
    from aurane.runtime.sharded import consolidate, save_sharded

    namespace: dict[str, Any] = {}
    exec(compile_text(_program()), namespace)  # noqa: S102 - the generated program
    torch.manual_seed(0)
    model = namespace["GPT"]()
    optimizer = torch.optim.AdamW(model.parameters(), lr=0.01)
    model(torch.randint(0, 32, (2, 8))).mean().backward()
    optimizer.step()
    entries = save_sharded(str(tmp_path), "step_00000001-s1-n1", model, optimizer)
    torch.save({"format": "aurane-checkpoint-2", "job": "train_gpt", **entries}, tmp_path / "a.pt")
    whole = consolidate(str(tmp_path / "a.pt"))
    _close(model.state_dict(), whole["model"], "model")
    plain = optimizer.state_dict()
    assert whole["optimizer"]["param_groups"] == plain["param_groups"]
    assert whole["optimizer"]["state"].keys() == plain["state"].keys()
    for key, state in plain["state"].items():
        _close(state, whole["optimizer"]["state"][key], f"optimizer {key}")
    from tests.conftest import run_cli

    out = tmp_path / "whole.pt"
    done = run_cli("checkpoint", "consolidate", str(tmp_path / "a.pt"), "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert torch.load(out, weights_only=True)["model"].keys() == whole["model"].keys()
    (tmp_path / SHARDED_FOLDER / "step_00000001-s1-n1" / ".metadata").unlink()
    with pytest.raises(CheckpointError, match=r"is missing or incomplete \(keep a \.pt file"):
        consolidate(str(tmp_path / "a.pt"))


def test_a_metadata_file_naming_other_code_is_refused(tmp_path: Path) -> None:
    """DCP's .metadata is a pickle: it is read by an unpickler that takes DCP's own records
    only, so a doctored one cannot run code (os.system here)."""
    import pickle

    from aurane.runtime.checkpoint import CheckpointError
    from aurane.runtime.sharded import consolidate

    folder = tmp_path / SHARDED_FOLDER / "x"
    folder.mkdir(parents=True)

    class Evil:
        def __reduce__(self) -> tuple[Any, ...]:
            import os

            return (os.system, ("touch pwned",))

    (folder / ".metadata").write_bytes(pickle.dumps(Evil()))
    entries = {"model": {"sharded": f"{SHARDED_FOLDER}/x"}}
    torch.save({"format": "aurane-checkpoint-2", **entries}, tmp_path / "a.pt")
    with pytest.raises(CheckpointError, match=r"metadata names (posix|os|nt)\.system, which is"):
        consolidate(str(tmp_path / "a.pt"))
    assert not (tmp_path / "pwned").exists() and not Path("pwned").exists()


# -- a SIGKILL while the shards are written, then resume ---------------------------------
# Its launches are the fixture's (_launches): the killed run, then EQUAL_DRIVER's launch,
# which trains the uninterrupted run (job_whole) and resumes the killed one (job_split).


def test_fsdp_resume_after_sigkill_equals_the_uninterrupted_run(launches: Path) -> None:
    tmp_path = launches
    code, output = _outcome(tmp_path / "killed.json")
    assert code != 0, output
    run = tmp_path / "ck_split" / "run_0001"
    assert (tmp_path / "killed_last.pt").is_file(), output  # copied as the kill left it
    last = torch.load(tmp_path / "killed_last.pt", weights_only=True)
    assert last["steps"]["count"] == 3 and last["partial"] is not None
    left = json.loads((tmp_path / "killed_left.json").read_text())
    assert len(left) == 2 and left[1].startswith("step_00000004-s1-")  # unnamed, left over
    code, output = _outcome(tmp_path / "driver.json")
    assert code == 0, output
    whole, resumed = (torch.load(tmp_path / f"{name}.pt") for name in ("whole", "resumed"))
    assert resumed["history"] == whole["history"]
    for key, value in whole["weights"].items():
        assert torch.equal(value, resumed["weights"][key]), key
    # the leftover and every folder no .pt file names are gone; last.pt's remains
    last = torch.load(run / "last.pt", weights_only=True)
    assert last["sessions"] == 2
    assert [p.name for p in (run / SHARDED_FOLDER).iterdir()] == [
        sharded_folder(last["model"]).split("/")[1]  # type: ignore[union-attr]
    ]


# -- two "nodes" on this machine ----------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_the_generated_file_trains_on_two_nodes_as_in_one_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/training.md's multi-node command, with two nodes of one process on this
    machine: torchrun's c10d rendezvous at 127.0.0.1:PORT joins them."""
    write_program(tmp_path, _program(folder="ck_nodes", extra=FSDP), "job_nodes")
    port = _free_port()
    nodes = [
        subprocess.Popen(
            [
                *TORCHRUN,
                "--nnodes=2",
                "--nproc-per-node=1",
                f"--node-rank={rank}",
                "--rdzv-backend=c10d",
                f"--rdzv-endpoint=127.0.0.1:{port}",
                "--rdzv-id=aurane-test",
                "job_nodes.py",
            ],
            cwd=tmp_path,
            env=env(OMP_NUM_THREADS="1", AURANE_PLOT="0"),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for rank in (0, 1)
    ]
    outputs = []
    for node in nodes:
        try:
            outputs.append(node.communicate(timeout=240))
        finally:
            if node.poll() is None:
                node.kill()
    for node, (out, err) in zip(nodes, outputs, strict=True):
        assert node.returncode == 0, out + err
    # rank 0 alone prints, whichever node it is on
    assert sum(out.count("epoch 2/2") for out, _ in outputs) == 1
    monkeypatch.chdir(tmp_path)  # the one-process run: in this process
    one = job_here(_program(batch=8, folder="ck_one"), "job_one")["train_gpt"]()
    from aurane.runtime.sharded import consolidate

    trained = consolidate(str(tmp_path / "ck_nodes" / "latest" / "last.pt"))
    _close(one.state_dict(), trained["model"], "two nodes")
