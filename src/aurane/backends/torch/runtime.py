"""Runtime helpers emitted once per generated file (templates, not imported at run time).

Each entry is the source of one top-level function or class with a leading underscore.
Generated programs depend only on torch and the standard library, so these helpers are
copied into the program rather than imported from Aurane. ``HELPERS`` maps a helper name
to ``(source, dependencies)``; ``helper_sources`` returns the closure in a fixed order.
"""

from __future__ import annotations

import re

NUMPY_IMPORT = """\
try:
    import numpy as np
except ImportError:  # NumPy is optional for torch; then there is no NumPy RNG to seed
    np = None"""

SETUP = '''\
def _setup(seed, device):
    """Seed Python, NumPy and torch; join torchrun's process group; return the device."""
    if seed is not None:
        random.seed(seed)
        torch.manual_seed(seed)
        if np is not None:
            np.random.seed(seed % 2**32)
    world_size = int(os.environ.get("WORLD_SIZE", "1"))
    if world_size > 1 and not dist.is_initialized():
        # Started by torchrun: one process per device, gradients averaged by DDP.
        backend = "nccl" if torch.cuda.is_available() and device != "cpu" else "gloo"
        dist.init_process_group(backend)
    if dist.is_initialized() and torch.cuda.is_available() and device != "cpu":
        local_rank = int(os.environ.get("LOCAL_RANK", "0"))
        torch.cuda.set_device(local_rank)
        return torch.device("cuda", local_rank)
    if device == "auto":
        if torch.cuda.is_available():
            return torch.device("cuda")
        if torch.backends.mps.is_available():
            return torch.device("mps")
        return torch.device("cpu")
    return torch.device(device)'''

IS_MAIN = '''\
def _is_main_process():
    """True outside torchrun and on rank 0: the only process that writes files and prints."""
    return not dist.is_initialized() or dist.get_rank() == 0'''

LOG = """\
def _log(message):
    if _is_main_process():
        print(message, flush=True)"""

FINISH = """\
def _finish_distributed():
    if dist.is_initialized():
        dist.barrier()
        dist.destroy_process_group()"""

DATA_LOADER = '''\
def _data_loader(
    dataset,
    *,
    batch_size,
    shuffle,
    seed,
    num_workers=0,
    pin_memory=False,
    drop_last=False,
):
    """A DataLoader whose shuffling comes from its own generator (saved in checkpoints).

    Under torchrun each process reads its own shard through a DistributedSampler.
    """
    generator = torch.Generator()
    if seed is None:  # no experiment seed: draw one from torch's global generator
        seed = int(torch.randint(2**62, ()).item())
    generator.manual_seed(seed)
    sampler = None
    if dist.is_initialized():
        sampler = DistributedSampler(dataset, shuffle=shuffle, seed=seed, drop_last=drop_last)
        shuffle = False
    return DataLoader(
        dataset,
        batch_size=batch_size,
        shuffle=shuffle,
        sampler=sampler,
        num_workers=num_workers,
        pin_memory=pin_memory,
        drop_last=drop_last,
        generator=generator,
    )'''

SET_EPOCH = '''\
def _set_epoch(loader, epoch):
    """Give every epoch its own DistributedSampler order (the same again after a resume)."""
    sampler = getattr(loader, "sampler", None)
    if isinstance(sampler, DistributedSampler):
        sampler.set_epoch(epoch)'''

DISTRIBUTE = '''\
def _distribute(model, device):
    """Wrap ``model`` in DistributedDataParallel under torchrun; unchanged otherwise."""
    if not dist.is_initialized():
        return model
    device_ids = [device.index] if device.type == "cuda" else None
    return DistributedDataParallel(model, device_ids=device_ids)'''

RNG = '''\
def _rng_state(loaders):
    """Every random state a resumed run needs to continue exactly like an uninterrupted one."""
    state = {
        "python": random.getstate(),
        "numpy": None,
        "torch": torch.get_rng_state(),
        "cuda": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else [],
        "loaders": [_loader_generator_state(loader) for loader in loaders],
    }
    if np is not None:
        name, keys, position, has_gauss, cached = np.random.get_state()
        # Plain tensors and numbers only, so the checkpoint loads with weights_only=True.
        state["numpy"] = {
            "keys": torch.from_numpy(keys.astype(np.int64)),
            "position": int(position),
            "has_gauss": int(has_gauss),
            "cached": float(cached),
        }
    return state


def _loader_generator_state(loader):
    generator = getattr(loader, "generator", None)
    return generator.get_state() if generator is not None else None


def _restore_rng(state, loaders):
    random.setstate(state["python"])
    if np is not None and state["numpy"] is not None:
        saved = state["numpy"]
        keys = saved["keys"].numpy().astype(np.uint32)
        position, has_gauss = saved["position"], saved["has_gauss"]
        np.random.set_state(("MT19937", keys, position, has_gauss, saved["cached"]))
    torch.set_rng_state(state["torch"])
    if torch.cuda.is_available() and state["cuda"]:
        torch.cuda.set_rng_state_all(state["cuda"])
    for loader, saved in zip(loaders, state["loaders"], strict=True):
        generator = getattr(loader, "generator", None)
        if generator is not None and saved is not None:
            generator.set_state(saved)'''

FINGERPRINT = '''\
def _fingerprint(config, *models):
    """What a checkpoint must match to be resumed: parameter layout and training configuration."""
    layout = [
        (name, tuple(tensor.shape), str(tensor.dtype))
        for model in models
        for name, tensor in model.state_dict().items()
    ]
    return {"model": hashlib.sha256(repr(layout).encode()).hexdigest(), "config": config}'''

CHECKPOINT = '''\
def _save_file(path, payload):
    """Write atomically: a temporary file in the same folder, fsync, then os.replace."""
    folder = os.path.dirname(path) or "."
    os.makedirs(folder, exist_ok=True)
    temporary = path + ".tmp"
    with open(temporary, "wb") as handle:
        torch.save(payload, handle)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, path)
    if hasattr(os, "O_DIRECTORY"):  # make the rename itself durable (POSIX)
        descriptor = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(descriptor)
        finally:
            os.close(descriptor)


def _save_checkpoints(folder, checkpoint, *, best=False, every=None):
    """last.pt every epoch, best.pt on improvement, epoch_NNNN.pt every ``every`` epochs."""
    if _is_main_process():
        epoch = checkpoint["epoch"]
        _save_file(os.path.join(folder, "last.pt"), checkpoint)
        if best:
            _save_file(os.path.join(folder, "best.pt"), checkpoint)
        if every is not None and epoch > 0 and epoch % every == 0:
            _save_file(os.path.join(folder, f"epoch_{epoch:04d}.pt"), checkpoint)
    if dist.is_initialized():
        dist.barrier()  # no rank runs ahead of a checkpoint it might need to resume from


def _load_checkpoint(path, kind, fingerprint, versions, entries):
    """Load with weights_only=True; refuse an incomplete checkpoint or one of another job.

    ``entries`` are the job's own (dotted) entries, checked with those every job saves, so
    a missing one is named instead of surfacing as a bare KeyError during the resume.
    """
    if os.path.isdir(path):
        path = os.path.join(path, "last.pt")
    if not os.path.isfile(path):
        raise FileNotFoundError(f"cannot resume: no checkpoint at {path!r}")
    try:
        checkpoint = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as error:
        message = f"cannot resume from {path!r}: not a readable checkpoint ({error})"
        raise ValueError(message) from None
    if not isinstance(checkpoint, dict):
        raise ValueError(f"cannot resume from {path!r}: not an Aurane checkpoint")
    if checkpoint.get("format") != _CHECKPOINT_FORMAT:
        raise ValueError(
            f"cannot resume from {path!r}: not an Aurane checkpoint "
            f"(format {checkpoint.get('format')!r}, expected {_CHECKPOINT_FORMAT!r})"
        )
    _check_entries(path, checkpoint, ("kind",))
    if checkpoint["kind"] != kind:
        found = checkpoint["kind"]
        raise ValueError(f"cannot resume from {path!r}: a {found} checkpoint, not {kind}")
    _check_entries(path, checkpoint, (*_CHECKPOINT_ENTRIES, *entries))
    if checkpoint["rng"]["numpy"] is not None:
        _check_entries(path, checkpoint, _NUMPY_ENTRIES)
    saved = checkpoint["fingerprint"]
    if saved["model"] != fingerprint["model"]:
        raise ValueError(
            f"cannot resume from {path!r}: it was written for a different model "
            "(parameter names, shapes or dtypes differ)"
        )
    now = fingerprint["config"]
    old = saved["config"]
    changed = [key for key in sorted(set(old) | set(now)) if old.get(key) != now.get(key)]
    if changed:
        details = "; ".join(
            f"{key}: checkpoint {old.get(key)!r}, now {now.get(key)!r}" for key in changed
        )
        raise ValueError(
            f"cannot resume from {path!r}: the training configuration differs ({details})"
        )
    written = checkpoint["versions"]
    if (written["aurane"], written["torch"]) != (versions["aurane"], versions["torch"]):
        _log(
            f"note: {path!r} was written by aurane {written['aurane']} with torch "
            f"{written['torch']}; this is aurane {versions['aurane']} with torch "
            f"{versions['torch']}, so the resumed run may differ from an uninterrupted one"
        )
    return checkpoint


def _check_entries(path, checkpoint, names):
    """Refuse a checkpoint without one of ``names``; "rng.torch" is checkpoint["rng"]["torch"]."""
    for name in names:
        value = checkpoint
        parts = name.split(".")
        for depth, part in enumerate(parts):
            if not isinstance(value, dict) or part not in value:
                missing = ".".join(parts[: depth + 1])
                raise ValueError(
                    f"cannot resume from {path!r}: the checkpoint has no {missing!r} entry "
                    "(it is incomplete or was edited)"
                )
            value = value[part]'''

CHECKPOINT_FORMAT = """\
_CHECKPOINT_FORMAT = "aurane-checkpoint-1"
# What every checkpoint holds besides "format", "kind" and the job's own entries.
_CHECKPOINT_ENTRIES = (
    "job",
    "versions.aurane",
    "versions.torch",
    "fingerprint.model",
    "fingerprint.config",
    "epoch",
    "history",
    "rng.python",
    "rng.numpy",
    "rng.torch",
    "rng.cuda",
    "rng.loaders",
)
_NUMPY_ENTRIES = tuple(f"rng.numpy.{key}" for key in ("keys", "position", "has_gauss", "cached"))"""

PROGRESS = '''\
class _Progress:
    """A progress bar with the running loss on a terminal; silent otherwise (epoch lines follow)."""

    def __init__(self, label, loader, running_loss):
        self.enabled = _is_main_process() and sys.stderr.isatty()
        self.label = label
        self.total = len(loader) if hasattr(loader, "__len__") else None
        self.running_loss = running_loss
        self.done = 0
        self.drawn_at = 0.0

    def step(self):
        self.done += 1
        now = time.monotonic()
        if not self.enabled or (now - self.drawn_at < 0.1 and self.done != self.total):
            return
        self.drawn_at = now
        if self.total:
            filled = 30 * self.done // self.total
            bar = f"[{'#' * filled}{'.' * (30 - filled)}] {self.done}/{self.total}"
        else:
            bar = f"{self.done} batches"
        sys.stderr.write(f"\\r{self.label} {bar} loss {self.running_loss():.4f}")
        sys.stderr.flush()

    def close(self):
        if self.enabled:
            sys.stderr.write("\\r" + " " * 79 + "\\r")
            sys.stderr.flush()'''

EPOCH_LINE = '''\
def _epoch_line(row, epochs, seconds):
    parts = [f"epoch {row['epoch']}/{epochs}"]
    parts += [f"{key} {value:.4g}" for key, value in row.items() if key != "epoch"]
    return " - ".join(parts) + f" - {seconds:.1f}s"'''

WARMUP_COSINE = '''\
def _warmup_cosine(optimizer, *, warmup_steps, max_steps, min_lr=0.0):
    """Linear warmup for ``warmup_steps`` optimizer steps, then cosine decay to ``min_lr``."""
    base_lr = optimizer.param_groups[0]["lr"]
    floor = min_lr / base_lr if base_lr > 0 else 0.0

    def factor(step):
        if step < warmup_steps:
            return step / max(1, warmup_steps)
        progress = min(1.0, (step - warmup_steps) / max(1, max_steps - warmup_steps))
        return floor + (1.0 - floor) * 0.5 * (1.0 + math.cos(math.pi * progress))

    return torch.optim.lr_scheduler.LambdaLR(optimizer, factor)'''

# name -> (source, helpers it calls, import lines it needs)
Helper = tuple[str, tuple[str, ...], tuple[str, ...]]

HELPERS: dict[str, Helper] = {
    "numpy": (NUMPY_IMPORT, (), ()),
    "_setup": (
        SETUP,
        ("numpy",),
        ("import os", "import random", "import torch", "import torch.distributed as dist"),
    ),
    "_is_main_process": (IS_MAIN, (), ("import torch.distributed as dist",)),
    "_log": (LOG, ("_is_main_process",), ()),
    "_finish_distributed": (FINISH, (), ("import torch.distributed as dist",)),
    "_data_loader": (
        DATA_LOADER,
        (),
        (
            "import torch",
            "from torch.utils.data import DataLoader, DistributedSampler",
            "import torch.distributed as dist",
        ),
    ),
    "_set_epoch": (SET_EPOCH, (), ("from torch.utils.data import DataLoader, DistributedSampler",)),
    "_distribute": (
        DISTRIBUTE,
        (),
        (
            "import torch.distributed as dist",
            "from torch.nn.parallel import DistributedDataParallel",
        ),
    ),
    "_rng_state": (RNG, ("numpy",), ("import random", "import torch")),
    "_fingerprint": (FINGERPRINT, (), ("import hashlib",)),
    "_CHECKPOINT_FORMAT": (CHECKPOINT_FORMAT, (), ()),
    "_save_checkpoints": (
        CHECKPOINT,
        ("_is_main_process", "_log", "_CHECKPOINT_FORMAT"),
        ("import os", "import torch", "import torch.distributed as dist"),
    ),
    "_Progress": (PROGRESS, ("_is_main_process",), ("import sys", "import time")),
    "_epoch_line": (EPOCH_LINE, (), ()),
    "_warmup_cosine": (WARMUP_COSINE, (), ("import math", "import torch")),
}

# What every training job calls (train and train_gan); each job kind adds its own.
JOB_HELPERS = (
    "_setup",
    "_log",
    "_data_loader",
    "_set_epoch",
    "_distribute",
    "_rng_state",
    "_fingerprint",
    "_save_checkpoints",
    "_Progress",
    "_epoch_line",
)


def helper_closure(names: set[str], registry: dict[str, Helper]) -> list[str]:
    """``names`` and every helper they depend on, in the fixed order of ``registry``."""
    wanted: set[str] = set()
    stack = list(names)
    while stack:
        name = stack.pop()
        if name not in wanted:
            wanted.add(name)
            stack.extend(registry[name][1])
    return [name for name in registry if name in wanted]


def helper_sources(
    names: set[str], registry: dict[str, Helper]
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(import lines, source blocks) for the helpers ``names`` need."""
    closure = helper_closure(names, registry)
    imports = sorted({line for name in closure for line in registry[name][2]})
    return tuple(imports), tuple(registry[name][0] for name in closure)


_PLACEHOLDER = re.compile(r"\$(\w+)")


def fill(template: str, flags: set[str], values: dict[str, str]) -> str:
    """Keep the lines whose flags hold, then substitute ``$name`` placeholders."""
    kept = []
    for line in template.split("\n"):
        if line.startswith("["):
            condition, line = line[1:].split("]", 1)
            if not all(_holds(part, flags) for part in condition.split("&")):
                continue
        kept.append(line)
    # One pass, so a substituted value (which may hold user text) is never rescanned.
    return _PLACEHOLDER.sub(lambda match: values[match.group(1)], "\n".join(kept))


def _holds(flag: str, flags: set[str]) -> bool:
    return flag[1:] not in flags if flag.startswith("!") else flag in flags
