"""``aurane plan`` and ``aurane sweep`` as subprocesses: exit statuses, --help, text and
JSON output, files written by --plot, and that neither imports torch."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import run_cli

ROOT = Path(__file__).resolve().parents[2]
GPT2 = str(ROOT / "examples" / "zoo" / "gpt2.aur")
RESNET = str(ROOT / "examples" / "zoo" / "resnet18.aur")

NO_JOB = "model Net:\n    input_shape = (4,)\n    def forward(x):\n        return dense(x, 2)\n"
ERRORS = "model Net:\n    input_shape = (4,)\n    def forward(x):\n        return densee(x, 2)\n"
SYMBOLIC = """seq = dim(1, 64)

dataset d:
    from aurane.data.SyntheticTokens
    size = 8
    sequence_length = 16
    vocab_size = 10
    batch = 2

model Net:
    input_shape = (seq,)
    input_dtype = int64
    def forward(x):
        return dense(embedding(x, 10, 8), 10)

train Net on d:
    epochs = 1
"""


@pytest.fixture
def files(tmp_path: Path) -> dict[str, str]:
    found = {}
    for name, text in (("no_job", NO_JOB), ("errors", ERRORS), ("symbolic", SYMBOLIC)):
        path = tmp_path / f"{name}.aur"
        path.write_text(text, encoding="utf-8")
        found[name] = str(path)
    return found


@pytest.mark.parametrize("command", ["plan", "sweep"])
def test_help(command: str) -> None:
    done = run_cli(command, "--help")
    assert done.returncode == 0
    assert f"usage: aurane {command}" in done.stdout


def test_plan_text() -> None:
    done = run_cli("plan", GPT2, "--memory", "24GiB", "--devices", "8")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert out.startswith("train GPT on text: adamw, cross_entropy, batch 4 per device, 8 devices")
    assert "parameters   124,439,808 in 148 tensors" in out
    assert "largest      transformer.h" in out
    for name in ("single", "ddp x8", "fsdp x8", "fsdp+checkpoint x8", "fsdp+offload x8"):
        assert f"\n  {name} " in out, name
    assert "largest batch (24.00 GiB)" in out


def test_plan_json_matches_its_options() -> None:
    done = run_cli("plan", RESNET, "--json", "--batch", "16", "--devices", "2", "--strategy",
                   "single", "--strategy", "fsdp", "--memory", "12GiB")  # fmt: skip
    assert done.returncode == 0, done.stderr
    payload = json.loads(done.stdout)
    (job,) = payload["jobs"]
    assert job["batch_size"] == 16 and job["devices"] == 2 and job["memory_limit"] == 12 * 2**30
    assert [row["name"] for row in job["strategies"]] == ["single", "fsdp"]
    assert job["parameters"] == 11_689_512


@pytest.mark.parametrize(
    ("args", "status", "message"),
    [
        (["--memory", "lots"], 2, "--memory: expected a memory size"),
        (["--memory", "24G"], 2, "--memory"),
        (["--devices", "0"], 2, "positive integer"),
        (["--batch", "-3"], 2, "positive integer"),
        (["--strategy", "zero3"], 2, "invalid choice"),
        (["--device", "tpu"], 2, "invalid choice"),
        (["--model", "Nobody"], 1, "no training job trains 'Nobody'"),
    ],
)
def test_plan_usage_errors(args: list[str], status: int, message: str) -> None:
    done = run_cli("plan", GPT2, *args)
    assert done.returncode == status, done.stderr
    assert message in done.stderr


def test_plan_input_errors(files: dict[str, str]) -> None:
    missing = run_cli("plan", files["no_job"] + ".missing")
    assert missing.returncode == 1
    no_job = run_cli("plan", files["no_job"])
    assert no_job.returncode == 1 and "no training job" in no_job.stderr
    errors = run_cli("plan", files["errors"])
    assert errors.returncode == 1 and "densee" in errors.stderr
    as_json = run_cli("plan", "--json", files["errors"])
    assert as_json.returncode == 1
    payload = json.loads(as_json.stdout)
    assert payload["ok"] is False and payload["diagnostics"][0]["code"]
    symbolic = run_cli("plan", files["symbolic"])
    assert symbolic.returncode == 2 and "--at seq=N" in symbolic.stderr
    bound = run_cli("plan", files["symbolic"], "--at", "seq=16", "--json")
    assert bound.returncode == 0, bound.stderr
    assert json.loads(bound.stdout)["jobs"][0]["parameters"] == 10 * 8 + 8 * 10 + 10


SWEEP = ["--set", "n_embd=384,768", "--set", "n_layer=2,4"]


def test_sweep_text_and_budget() -> None:
    done = run_cli("sweep", GPT2, *SWEEP, "--max", "params=60M")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("sweep of GPT")
    assert "n_embd  n_layer  parameters" in done.stdout
    assert "largest under params <= 60M: n_embd=768, n_layer=2" in done.stdout


def test_sweep_json() -> None:
    done = run_cli("sweep", GPT2, *SWEEP, "--json", "--max", "memory=4GiB", "--batch", "2")
    assert done.returncode == 0, done.stderr
    payload = json.loads(done.stdout)
    assert payload["parses"] == 1 and payload["analyses"] == 4
    assert [c["values"] for c in payload["configurations"]] == [
        {"n_embd": 384, "n_layer": 2},
        {"n_embd": 384, "n_layer": 4},
        {"n_embd": 768, "n_layer": 2},
        {"n_embd": 768, "n_layer": 4},
    ]
    memories = [c["memory_bytes"] for c in payload["configurations"]]
    assert memories == sorted(memories) and all(m > 0 for m in memories)
    fitting = [c for c in payload["configurations"] if c["memory_bytes"] <= 4 * 2**30]
    assert payload["best"]["values"] == max(fitting, key=lambda c: c["memory_bytes"])["values"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--set", "n_embed=384"], "no top-level constant 'n_embed'"),
        (["--set", "n_embd=big"], "'big' is not a number"),
        (["--set", "n_embd"], "expected NAME=VALUE"),
        (["--set", "n_embd=384,"], "one or more values"),
        (["--set", "n_embd=384", "--max", "speed=3"], "--max 'speed=3'"),
        (["--set", "n_embd=384", "--max", "memory=24G"], "--max memory"),
        (["--set", "n_embd=384", "--set", "n_embd=768"], "twice"),
        (
            [
                "--set",
                "n_embd=1,2,3,4,5,6,7,8,9,10",
                "--set",
                "n_layer=" + ",".join(map(str, range(1, 1002))),
            ],
            "limit",
        ),
    ],
)
def test_sweep_usage_errors(args: list[str], message: str) -> None:
    done = run_cli("sweep", GPT2, *args)
    assert done.returncode == 2, done.stderr
    assert message in done.stderr


def test_sweep_needs_set() -> None:
    done = run_cli("sweep", GPT2)
    assert done.returncode == 2 and "--set" in done.stderr


def test_sweep_invalid_configuration_is_a_located_error() -> None:
    done = run_cli("sweep", GPT2, "--set", "n_embd=250,768")
    assert done.returncode == 1
    assert "error T006" in done.stdout  # the row says why
    lines = Path(GPT2).read_text(encoding="utf-8").splitlines()
    line = next(i for i, text in enumerate(lines, 1) if "reshape(q, block" in text)
    assert "n_embd=250:" in done.stderr and f"gpt2.aur:{line}:" in done.stderr  # located


def test_sweep_plot(tmp_path: Path) -> None:
    out = tmp_path / "sweep.png"
    done = run_cli("sweep", GPT2, *SWEEP, "--plot", str(out))
    assert done.returncode == 0, done.stderr
    assert out.read_bytes().startswith(b"\x89PNG")
    svg = tmp_path / "sweep.svg"
    assert run_cli("sweep", GPT2, *SWEEP, "--plot", str(svg)).returncode == 0
    assert b"<svg" in svg.read_bytes()[:400]
    refused = run_cli("sweep", GPT2, *SWEEP, "--plot", str(tmp_path))
    assert refused.returncode == 2


def test_sweep_plot_without_matplotlib(tmp_path: Path) -> None:
    code = (
        "import sys\nsys.modules['matplotlib'] = None\n"
        "from aurane.cli.main import main\n"
        f"sys.exit(main(['sweep', {GPT2!r}, '--set', 'n_layer=2', '--plot', "
        f"{str(tmp_path / 'x.png')!r}]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    assert done.returncode == 2
    assert "--plot needs matplotlib: pip install 'aurane[plot]'" in done.stderr
    assert not (tmp_path / "x.png").exists()


_PROBE = """
import json, sys
from aurane.cli.main import main
import contextlib, io
with contextlib.redirect_stdout(io.StringIO()):
    code = main(sys.argv[1:])
print(json.dumps({"code": code, "torch": "torch" in sys.modules}))
"""


@pytest.mark.parametrize(
    "args", [["plan", GPT2, "--memory", "24GiB"], ["sweep", GPT2, "--set", "n_layer=2,4"]]
)
def test_plan_and_sweep_never_import_torch(args: list[str]) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, *args], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    result = json.loads(done.stdout.splitlines()[-1])
    assert result == {"code": 0, "torch": False}
