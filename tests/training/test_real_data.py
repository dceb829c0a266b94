"""Real data (issue 25 item 5): tables, token files; checked from headers, trained end to end.

Every file is written by the test; nothing is downloaded.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from aurane.semantics.data_contracts import DataContract, contract
from tests.conftest import run_cli
from tests.helpers import errors, front

pandas = pytest.importorskip("pandas")
pyarrow = pytest.importorskip("pyarrow")
torch = pytest.importorskip("torch")


def _rows(count: int = 40) -> dict[str, list[float | int]]:
    g = torch.Generator().manual_seed(0)
    x = torch.randn((count, 2), generator=g)
    return {
        "a": x[:, 0].tolist(),
        "b": x[:, 1].tolist(),
        "label": (x[:, 0] > 0).long().tolist(),
        "y": (2 * x[:, 0] - x[:, 1]).tolist(),
    }


def write_csv(path: Path, count: int = 40) -> Path:
    columns = _rows(count)
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(columns)
        writer.writerows(zip(*columns.values(), strict=True))
    return path


def write_parquet(path: Path, count: int = 40) -> Path:
    pandas.DataFrame(_rows(count)).to_parquet(path)
    return path


def table_block(
    path: Path | str, inputs: str = '["a", "b"]', target: str = '"y"', extra: str = ""
) -> str:
    return (
        f'dataset d:\n    from aurane.data.Table\n    path = "{path}"\n    inputs = {inputs}\n'
        f"    target = {target}\n{extra}    batch = 8\n\n"
    )


def data_contract(source: str) -> DataContract:
    result = front(source)
    assert result.program is not None
    found = next(d for d in (result.resolved or result.program).datasets if d.name == "d")
    return contract(found)


@pytest.mark.parametrize("writer", [write_csv, write_parquet])
def test_table_contract_comes_from_the_header(tmp_path: Path, writer: object) -> None:
    suffix = ".csv" if writer is write_csv else ".parquet"
    path = writer(tmp_path / f"rows{suffix}")  # type: ignore[operator]
    data = data_contract(table_block(path))
    assert data.problems == ()
    assert (data.sample.shape, data.sample.dtype) == ((2,), "float32")
    assert (data.targets.kind, data.targets.shape, data.targets.dtype) == (
        "regression",
        (1,),
        "float32",
    )
    labels = data_contract(table_block(path, target='"label"', extra="    classes = 2\n"))
    assert (labels.targets.kind, labels.targets.classes, labels.targets.dtype) == (
        "class",
        2,
        "int64",
    )
    # the runtime yields exactly what the contract says
    from aurane.data import Table

    rows = Table(str(path), ["a", "b"], "y")
    item, target = rows[0]
    assert (tuple(item.shape), item.dtype, tuple(target.shape), target.dtype) == (
        (2,),
        torch.float32,
        (1,),
        torch.float32,
    )
    labelled = Table(str(path), ["a", "b"], "label", classes=2)
    assert labelled[0][1].dtype == torch.int64 and labelled[0][1].shape == ()
    assert len(rows) == 40


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_missing_column_is_a_located_error(tmp_path: Path, suffix: str) -> None:
    writer = write_csv if suffix == ".csv" else write_parquet
    path = writer(tmp_path / f"rows{suffix}")
    source = table_block(path, target='"lable"', extra="    classes = 2\n")
    found = [d for d in errors(source) if d.code == "T116"]
    assert len(found) == 1
    assert "no column 'lable'" in found[0].message
    assert found[0].hint is not None and "label" in found[0].hint
    line = source.splitlines()[found[0].span.line - 1]
    assert line.strip().startswith("target =")


def test_float_column_as_class_labels_is_refused_from_the_footer(tmp_path: Path) -> None:
    path = write_parquet(tmp_path / "rows.parquet")
    source = table_block(path, target='"y"', extra="    classes = 2\n")
    assert [d.code for d in errors(source)] == ["T116"]


def test_text_column_in_parquet_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "rows.parquet"
    pandas.DataFrame({"a": ["x", "y"], "y": [1.0, 2.0]}).to_parquet(path)
    found = errors(table_block(path, inputs='["a"]'))
    assert [d.code for d in found] == ["T116"] and "not a number" in found[0].message


@pytest.mark.parametrize(
    "content",
    [b"", b"\xff\xfe\x00garbage\n1,2\n", b"a" * (1 << 20) + b"xx"],
    ids=["empty", "not-utf8", "endless-header"],
)
def test_hostile_csv_is_a_located_error(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "rows.csv"
    path.write_bytes(content)
    found = errors(table_block(path))
    assert [d.code for d in found] == ["T116"]


def test_broken_parquet_footer_is_a_located_error(tmp_path: Path) -> None:
    path = tmp_path / "rows.parquet"
    path.write_bytes(b"PAR1" + b"\x00" * 64 + b"\xff\xff\xff\x7fPAR1")
    found = errors(table_block(path))
    assert [d.code for d in found] == ["T116"] and "Parquet" in found[0].message


def test_missing_file_leaves_the_contract_to_the_first_batch(tmp_path: Path) -> None:
    data = data_contract(table_block(tmp_path / "later.csv"))
    assert data.problems == () and data.sample.shape is None


def test_table_mismatch_with_model_input_fails_check(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "rows.csv")
    source = table_block(path) + (
        "model M:\n    input_shape = (3,)\n    def forward(x):\n        x -> dense(1)\n\n"
        "train M on d:\n    epochs = 1\n    loss = mse\n"
    )
    assert "T092" in [d.code for d in errors(source)]


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_aurane_run_trains_on_a_table(tmp_path: Path, suffix: str) -> None:
    writer = write_csv if suffix == ".csv" else write_parquet
    writer(tmp_path / f"rows{suffix}", count=64)
    program = table_block(f"rows{suffix}", target='"label"', extra="    classes = 2\n") + (
        "model M:\n    input_shape = (2,)\n    def forward(x):\n"
        "        x -> dense(8) -> relu -> dense(2)\n\n"
        "train M on d:\n    epochs = 3\n    lr = 0.1\n    loss = cross_entropy\n"
        '    optimizer = sgd\n    metrics = [accuracy]\n    checkpoint_dir = "ck"\n'
    )
    (tmp_path / "prog.aur").write_text(program)
    checked = run_cli("check", "prog.aur", cwd=tmp_path)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    done = run_cli("run", "prog.aur", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    history = next((tmp_path / "ck").rglob("metrics.csv")).read_text().splitlines()
    assert len(history) == 4  # a header and one row per epoch
