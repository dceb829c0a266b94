"""``aurane init``: an offline starter project that checks, compiles and trains as is.

The program trains on ``aurane.data.SyntheticImages``, so nothing is downloaded; it
takes a few seconds on a CPU.
"""

from __future__ import annotations

from pathlib import Path

PROGRAM_NAME = "model.aur"

PROGRAM = """\
# A small image classifier on offline synthetic data.
#   aurane check model.aur
#   aurane compile model.aur -o model.py
#   aurane run model.aur

use torch

experiment Starter:
    seed = 0
    device = "auto"

dataset train_images:
    from aurane.data.SyntheticImages
    size = 512
    image_size = (1, 16, 16)
    num_classes = 4
    batch = 32

dataset val_images:
    from aurane.data.SyntheticImages
    size = 128
    image_size = (1, 16, 16)
    num_classes = 4
    train = false
    batch = 64

model Classifier:
    input_shape = (1, 16, 16)
    def forward(x):
        x -> conv2d(8, kernel=3, padding=1).relu
          -> maxpool(2)
          -> flatten()
          -> dense(32).relu
          -> dropout(0.1)
          -> dense(4)

train Classifier on train_images:
    validate_on = val_images
    epochs = 3
    loss = cross_entropy
    optimizer = adam(lr=0.003)
    metrics = [accuracy]
    checkpoint_dir = "./checkpoints"
    save_best = true
"""

README = """\
# {name}

A starter {aurane} project: a small image
classifier trained on offline synthetic data (`aurane.data.SyntheticImages`), so it runs
anywhere without a download.

```sh
aurane check model.aur            # semantic and shape checks
aurane compile model.aur -o model.py
aurane run model.aur              # compile and train (3 epochs, a few seconds on a CPU)
```

Training prints one line per epoch and writes `checkpoints/last.pt` and
`checkpoints/best.pt`. Resume from Python with
`model.train_classifier(resume_from="checkpoints/last.pt")` after raising `epochs`.

To use real data, replace `from aurane.data.SyntheticImages` with a torchvision
dataset such as `torchvision.datasets.MNIST` and add `root = "./data"` and
`download = true`.
"""

GITIGNORE = "checkpoints/\n__pycache__/\n.aurane_cache/\n"


class InitError(Exception):
    pass


def _aurane_link() -> str:
    """``[Aurane](homepage)`` with the URL of pyproject.toml (the installed metadata)."""
    from aurane.project import project_url

    homepage = project_url("Homepage")
    return f"[Aurane]({homepage})" if homepage else "Aurane"


def create_project(folder: Path) -> list[Path]:
    """Write the starter files into ``folder`` (created if missing; must be empty)."""
    if folder.exists() and not folder.is_dir():
        raise InitError(f"'{folder}' exists and is not a directory")
    if folder.is_dir() and any(folder.iterdir()):
        raise InitError(f"'{folder}' is not empty; choose a new or empty directory")
    folder.mkdir(parents=True, exist_ok=True)
    files = {
        PROGRAM_NAME: PROGRAM,
        "README.md": README.format(name=folder.resolve().name, aurane=_aurane_link()),
        ".gitignore": GITIGNORE,
    }
    written = []
    for name, text in files.items():
        path = folder / name
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written
