"""Real data (issue 25 item 5): tables, token files; checked from headers, trained end to end.

Every file is written by the test; nothing is downloaded. The end-to-end runs run the
program's command line in this process (``main_here``: what ``aurane run`` starts, without
an interpreter and a torch import per run), the run a signal stops included (its real
handler; the status SystemExit's code); ``prepare-tokens`` and the ``--standalone`` program
stay child processes.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from aurane.semantics.data_contracts import DataContract, contract
from tests.conftest import run_cli
from tests.helpers import errors, front
from tests.training.helpers import main_here

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
    found = [d for d in errors(source) if d.code == "T118"]
    assert len(found) == 1
    assert "no column 'lable'" in found[0].message
    assert found[0].hint is not None and "label" in found[0].hint
    line = source.splitlines()[found[0].span.line - 1]
    assert line.strip().startswith("target =")


def test_float_column_as_class_labels_is_refused_from_the_footer(tmp_path: Path) -> None:
    path = write_parquet(tmp_path / "rows.parquet")
    source = table_block(path, target='"y"', extra="    classes = 2\n")
    assert [d.code for d in errors(source)] == ["T118"]


def test_text_column_in_parquet_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "rows.parquet"
    pandas.DataFrame({"a": ["x", "y"], "y": [1.0, 2.0]}).to_parquet(path)
    found = errors(table_block(path, inputs='["a"]'))
    assert [d.code for d in found] == ["T118"] and "not a number" in found[0].message


@pytest.mark.parametrize(
    "content",
    [b"", b"\xff\xfe\x00garbage\n1,2\n", b"a" * (1 << 20) + b"xx"],
    ids=["empty", "not-utf8", "endless-header"],
)
def test_hostile_csv_is_a_located_error(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "rows.csv"
    path.write_bytes(content)
    found = errors(table_block(path))
    assert [d.code for d in found] == ["T118"]


def test_broken_parquet_footer_is_a_located_error(tmp_path: Path) -> None:
    path = tmp_path / "rows.parquet"
    path.write_bytes(b"PAR1" + b"\x00" * 64 + b"\xff\xff\xff\x7fPAR1")
    found = errors(table_block(path))
    assert [d.code for d in found] == ["T118"] and "Parquet" in found[0].message


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
def test_aurane_run_trains_on_a_table(
    tmp_path: Path, suffix: str, monkeypatch: pytest.MonkeyPatch
) -> None:
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
    monkeypatch.chdir(tmp_path)
    main_here(program, job="train_m", name="prog")
    history = next((tmp_path / "ck").rglob("metrics.csv")).read_text().splitlines()
    assert len(history) == 4  # a header and one row per epoch


# ------------------------------------------------------------------ tokenized text

TEXT = "the cat sat on the mat. the dog sat on the log.\n" * 20


def write_tokenizer(path: Path, corpus: Path) -> Path:
    tokenizers = pytest.importorskip("tokenizers")
    from tokenizers import models, pre_tokenizers, trainers

    tokenizer = tokenizers.Tokenizer(models.BPE(unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    trainer = trainers.BpeTrainer(vocab_size=40, special_tokens=["[UNK]"])
    tokenizer.train([str(corpus)], trainer)
    tokenizer.save(str(path))
    return path


@pytest.fixture
def token_file(tmp_path: Path) -> Path:
    from aurane.data import prepare_tokens

    corpus = tmp_path / "corpus.txt"
    corpus.write_text(TEXT)
    tokenizer = write_tokenizer(tmp_path / "tokenizer.json", corpus)
    out = tmp_path / "train.bin"
    meta = prepare_tokens([str(corpus)], str(tokenizer), str(out), lines_per_batch=3)
    assert meta["dtype"] == "uint16" and meta["tokens"] > 100
    return out


def test_prepare_tokens_packs_the_tokenizer_ids(token_file: Path) -> None:
    import json

    import numpy
    from tokenizers import Tokenizer

    from aurane.data import TokenFile

    meta = json.loads(Path(f"{token_file}.json").read_text())
    tokenizer = Tokenizer.from_file(str(token_file.parent / "tokenizer.json"))
    expected = [i for line in TEXT.splitlines(keepends=True) for i in tokenizer.encode(line).ids]
    stored = numpy.fromfile(token_file, dtype=numpy.uint16).tolist()
    assert stored == expected and meta["tokens"] == len(expected)
    assert meta["vocab_size"] == tokenizer.get_vocab_size()
    windows = TokenFile(str(token_file), sequence_length=8)
    assert len(windows) == (len(expected) - 1) // 8
    x, y = windows[2]
    assert x.dtype == torch.int64 and x.tolist() == expected[16:24]
    assert y.tolist() == expected[17:25]
    with pytest.raises(IndexError):
        windows[len(windows)]


def test_prepare_tokens_with_a_tiktoken_encoding(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``tiktoken:NAME`` encodes with tiktoken's encoder; the encoding is built here from a
    byte-level table (tiktoken would fetch gpt2's), so the test stays offline."""
    tiktoken = pytest.importorskip("tiktoken")
    import numpy

    from aurane.data import prepare_tokens

    table = {bytes([i]): i for i in range(256)} | {b"ab": 256, b"the": 257}
    encoding = tiktoken.Encoding(
        name="tiny", pat_str=r"\S+|\s+", mergeable_ranks=table, special_tokens={}
    )
    asked: list[str] = []
    monkeypatch.setattr(tiktoken, "get_encoding", lambda name: asked.append(name) or encoding)
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(TEXT)
    out = tmp_path / "train.bin"
    meta = prepare_tokens([str(corpus)], "tiktoken:tiny", str(out), lines_per_batch=2)
    expected = [i for line in TEXT.splitlines(keepends=True) for i in encoding.encode(line)]
    assert asked == ["tiny"] and 257 in expected
    assert numpy.fromfile(out, dtype=numpy.uint16).tolist() == expected
    assert (meta["vocab_size"], meta["tokens"]) == (258, len(expected))


def test_token_file_contract_reads_the_vocabulary(token_file: Path) -> None:
    block = (
        f'dataset d:\n    from aurane.data.TokenFile\n    path = "{token_file}"\n'
        "    sequence_length = 8\n    batch = 4\n\n"
    )
    data = data_contract(block)
    vocab = __import__("json").loads(Path(f"{token_file}.json").read_text())["vocab_size"]
    assert data.problems == ()
    assert (data.sample.shape, data.sample.dtype) == ((8,), "int64")
    assert (data.targets.kind, data.targets.shape, data.targets.classes) == ("class", (8,), vocab)
    wrong = block.replace("    batch", f"    vocab_size = {vocab + 1}\n    batch")
    found = errors(wrong)
    assert [d.code for d in found] == ["T118"] and f"vocabulary of {vocab}" in found[0].message
    # a head smaller than the vocabulary fails check (T093) from the sidecar alone
    model = (
        "model M:\n    input_shape = (8,)\n    input_dtype = int64\n    def forward(x):\n"
        f"        x -> embedding({vocab}, 8) -> dense(4)\n\n"
        "train M on d:\n    epochs = 1\n    loss = cross_entropy\n"
    )
    assert "T093" in [d.code for d in errors(block + model)]


@pytest.mark.parametrize(
    "sidecar",
    [b"[1, 2]", b"{not json", b"{" + b" " * (1 << 16) + b"}", b'{"vocab_size": "many"}'],
    ids=["list", "broken", "too-large", "bad-vocab"],
)
def test_hostile_token_sidecar_is_a_located_error(tmp_path: Path, sidecar: bytes) -> None:
    (tmp_path / "t.bin").write_bytes(b"\x00\x00")
    (tmp_path / "t.bin.json").write_bytes(sidecar)
    block = (
        f'dataset d:\n    from aurane.data.TokenFile\n    path = "{tmp_path / "t.bin"}"\n'
        "    sequence_length = 8\n"
    )
    assert [d.code for d in errors(block)] == ["T118"]


def test_prepare_tokens_command_and_a_run(
    token_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = token_file.parent
    import subprocess
    import sys

    made = subprocess.run(
        [sys.executable, "-m", "aurane.data", "prepare-tokens", "corpus.txt",
         "--tokenizer", "tokenizer.json", "--out", "again.bin"],
        cwd=folder, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    assert (folder / "again.bin").read_bytes() == token_file.read_bytes()
    program = (
        'dataset d:\n    from aurane.data.TokenFile\n    path = "again.bin"\n'
        "    sequence_length = 8\n    batch = 8\n\n"
        "model M:\n    input_shape = (8,)\n    input_dtype = int64\n    def forward(x):\n"
        "        x -> embedding(40, 16) -> dense(40)\n\n"
        "train M on d:\n    epochs = 2\n    lr = 0.01\n    loss = cross_entropy\n"
        '    checkpoint_dir = "ck"\n'
    )
    monkeypatch.chdir(folder)
    main_here(program, job="train_m", name="prog")
    assert len(next((folder / "ck").rglob("metrics.csv")).read_text().splitlines()) == 3


# ------------------------------------------------------------------ Hugging Face datasets


def save_hf(path: Path, count: int = 64, *, as_dict: bool = False) -> Path:
    datasets = pytest.importorskip("datasets")
    features = datasets.Features(
        {
            "a": datasets.Value("float32"),
            "b": datasets.Value("float32"),
            "label": datasets.ClassLabel(names=["neg", "pos"]),
            "y": datasets.Value("float64"),
            "text": datasets.Value("string"),
        }
    )
    rows = _rows(count)
    rows["text"] = ["row"] * count
    table = datasets.Dataset.from_dict(rows, features=features)
    (datasets.DatasetDict({"train": table, "test": table}) if as_dict else table).save_to_disk(
        str(path)
    )
    return path


def hf_block(path: Path | str, target: str = '"label"', extra: str = "") -> str:
    return (
        f'dataset d:\n    from aurane.data.HFDataset\n    path = "{path}"\n'
        f'    inputs = ["a", "b"]\n    target = {target}\n{extra}    batch = 8\n\n'
    )


def test_saved_dataset_contract_reads_dataset_info(tmp_path: Path) -> None:
    path = save_hf(tmp_path / "saved")
    data = data_contract(hf_block(path))
    assert data.problems == ()
    assert (data.sample.shape, data.sample.dtype) == ((2,), "float32")
    # the ClassLabel gives the class count without a `classes` field
    assert (data.targets.kind, data.targets.classes) == ("class", 2)
    assert data_contract(hf_block(path, target='"y"')).targets.kind == "regression"
    assert [d.code for d in errors(hf_block(path, target='"txt"'))] == ["T118"]
    text = errors(hf_block(path, target='"text"'))
    assert [d.code for d in text] == ["T118"] and "not a number" in text[0].message

    from aurane.data import HFDataset

    rows = HFDataset(str(path), ["a", "b"], "label")
    item, label = rows[3]
    expected = _rows(64)
    assert item.tolist() == pytest.approx([expected["a"][3], expected["b"][3]])
    assert label.dtype == torch.int64 and int(label) == expected["label"][3]
    assert rows.num_classes == 2 and len(rows) == 64


def test_saved_dataset_dict_split(tmp_path: Path) -> None:
    path = save_hf(tmp_path / "saved", as_dict=True)
    assert data_contract(hf_block(path, extra='    split = "test"\n')).targets.classes == 2
    found = errors(hf_block(path, extra='    split = "validation"\n'))
    assert [d.code for d in found] == ["T118"] and "splits: train, test" in found[0].message


def test_hostile_dataset_info_is_a_located_error(tmp_path: Path) -> None:
    folder = tmp_path / "saved"
    folder.mkdir()
    (folder / "dataset_info.json").write_bytes(b"{" * 100_000)
    assert [d.code for d in errors(hf_block(folder))] == ["T118"]
    (folder / "dataset_info.json").write_bytes(b'{"features": [1]}')
    assert [d.code for d in errors(hf_block(folder))] == ["T118"]


def test_hf_dataset_from_a_local_csv(tmp_path: Path) -> None:
    from aurane.data import HFDataset

    path = write_csv(tmp_path / "rows.csv")
    rows = HFDataset(str(path), ["a", "b"], "y", cache_dir=str(tmp_path / "cache"))
    item, target = rows[0]
    assert tuple(item.shape) == (2,) and target.dtype == torch.float32
    assert data_contract(hf_block(path, target='"y"')).targets.shape == (1,)


def test_aurane_run_trains_on_a_saved_dataset(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    save_hf(tmp_path / "saved")
    program = hf_block("saved") + (
        "model M:\n    input_shape = (2,)\n    def forward(x):\n"
        "        x -> dense(8) -> relu -> dense(2)\n\n"
        "train M on d:\n    epochs = 2\n    lr = 0.1\n    loss = cross_entropy\n"
        '    optimizer = sgd\n    checkpoint_dir = "ck"\n'
    )
    monkeypatch.chdir(tmp_path)
    main_here(program, job="train_m", name="prog")
    assert len(next((tmp_path / "ck").rglob("metrics.csv")).read_text().splitlines()) == 3


# ------------------------------------------------------------------ webdataset shards


def write_shards(folder: Path, shards: int = 3, per_shard: int = 8) -> list[Path]:
    import io
    import tarfile

    import numpy

    folder.mkdir(exist_ok=True)
    paths = []
    for s in range(shards):
        path = folder / f"shard-{s:04d}.tar"
        with tarfile.open(path, "w") as archive:
            for i in range(per_shard):
                index = s * per_shard + i
                buffer = io.BytesIO()
                numpy.save(buffer, numpy.full((2,), index, dtype=numpy.float32))
                for ext, data in (("npy", buffer.getvalue()), ("cls", str(index % 2).encode())):
                    member = tarfile.TarInfo(f"{index:06d}.{ext}")
                    member.size = len(data)
                    archive.addfile(member, io.BytesIO(data))
        paths.append(path)
    return paths


def shards_block(urls: str, extra: str = "") -> str:
    return f"dataset d:\n    from aurane.data.Shards\n    urls = {urls}\n{extra}    batch = 4\n\n"


def test_shards_resume_at_their_position(tmp_path: Path) -> None:
    pytest.importorskip("webdataset")
    from aurane.data import Shards

    write_shards(tmp_path / "s")
    stream = Shards(str(tmp_path / "s" / "shard-*.tar"), classes=2)
    assert len(stream) == 24
    seen = []
    for item, label in stream:
        seen.append(int(item[0]))
        assert int(label) == seen[-1] % 2 and label.dtype == torch.int64
        if len(seen) == 11:
            break
    position = stream.state_dict()
    assert position == {"shard": 1, "sample": 3}
    resumed = Shards(str(tmp_path / "s" / "shard-*.tar"), classes=2)
    resumed.load_state_dict(position)
    rest = [int(item[0]) for item, _ in resumed]
    assert seen + rest == list(range(24))
    assert resumed.state_dict() == {"shard": 0, "sample": 0}  # the next pass starts over
    assert [int(x[0]) for x, _ in resumed][:2] == [0, 1]


def test_shards_with_loader_workers_give_each_sample_once(tmp_path: Path) -> None:
    pytest.importorskip("webdataset")
    from aurane.data import Shards

    write_shards(tmp_path / "s")
    stream = Shards(str(tmp_path / "s" / "shard-*.tar"), classes=2)
    loader = torch.utils.data.DataLoader(stream, batch_size=4, num_workers=2)
    seen = [int(value) for inputs, _ in loader for value in inputs[:, 0]]
    assert sorted(seen) == list(range(24))


def test_shards_contract_reads_the_first_npy_header(tmp_path: Path) -> None:
    paths = write_shards(tmp_path / "s", shards=1)
    data = data_contract(shards_block(f'["{paths[0]}"]', "    classes = 2\n"))
    assert data.problems == ()
    assert (data.sample.shape, data.sample.dtype) == ((2,), "float32")
    assert (data.targets.kind, data.targets.classes) == ("class", 2)
    found = errors(shards_block(f'"{paths[0]}"', '    inputs = "jpg"\n'))
    assert [d.code for d in found] == ["T118"] and ".jpg" in found[0].message


@pytest.mark.parametrize(
    "content",
    [b"not a tar at all" * 40, b"\x00" * 10],
    ids=["garbage", "short"],
)
def test_hostile_shard_is_a_located_error(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "bad.tar"
    path.write_bytes(content)
    assert [d.code for d in errors(shards_block(f'"{path}"'))] == ["T118"]


def test_hostile_npy_header_is_refused(tmp_path: Path) -> None:
    import io
    import tarfile

    from aurane.semantics.data_files import DataFileError, npy_header

    header = b"{'descr': '<f4', 'fortran_order': False, 'shape': __import__('os').getpid()}"
    data = b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header
    with pytest.raises(DataFileError):
        npy_header(data, "x")
    path = tmp_path / "evil.tar"
    with tarfile.open(path, "w") as archive:
        member = tarfile.TarInfo("0.npy")
        member.size = len(data)
        archive.addfile(member, io.BytesIO(data))
    assert [d.code for d in errors(shards_block(f'"{path}"'))] == ["T118"]


def test_aurane_run_streams_shards(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("webdataset")
    write_shards(tmp_path / "s")
    program = shards_block('["s/shard-0000.tar", "s/shard-0001.tar"]', "    classes = 2\n") + (
        "model M:\n    input_shape = (2,)\n    def forward(x):\n        x -> dense(2)\n\n"
        "train M on d:\n    epochs = 2\n    loss = cross_entropy\n"
        '    checkpoint_dir = "ck"\n'
    )
    monkeypatch.chdir(tmp_path)
    main_here(program, job="train_m", name="prog")
    assert "2 epochs x 4 batches" in capsys.readouterr().out  # 16 samples in two shards, each epoch


def test_a_run_interrupted_in_a_stream_resumes_at_its_position(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A mid-epoch checkpoint keeps the stream's position; the resumed run starts there
    without reading the shards before it: shard 0 is made unreadable (its labels are not
    numbers, its keys intact) once the run has passed it, and the resume still finishes.
    Both sessions run the program's command line in this process (main_here); the stop is
    a real SIGINT through the real handler (AURANE_SIGNAL_AT), SystemExit's code its exit
    status (an interpreter's own 130 is tests/cli/test_run_behaviour.py's)."""
    pytest.importorskip("webdataset")
    import io
    import sys
    import tarfile

    paths = write_shards(tmp_path / "s")  # 3 shards of 8, batches of 4: 6 batches an epoch
    program = shards_block('"s/shard-*.tar"', "    classes = 2\n") + (
        "model M:\n    input_shape = (2,)\n    def forward(x):\n        x -> dense(2)\n\n"
        "train M on d:\n    epochs = 1\n    loss = cross_entropy\n"
        '    checkpoint_dir = "ck"\n'
    )
    monkeypatch.chdir(tmp_path)
    with monkeypatch.context() as session, pytest.raises(SystemExit) as stopped:
        session.setenv("AURANE_SIGNAL_AT", "4:SIGINT")  # after 16 samples: shard 1, 8 done
        session.setattr(sys, "argv", ["prog.py"])
        main_here(program, job="train_m", name="prog")
    assert stopped.value.code == 130, capsys.readouterr().err
    last = tmp_path / "ck" / "run_0001" / "last.pt"
    partial = torch.load(last, weights_only=True)["partial"]
    assert partial["batches"] == 4 and partial["stream"] == {"shard": 1, "sample": 8}
    with tarfile.open(paths[0], "w") as archive:  # same keys, labels that fail to decode
        for index in range(8):
            for ext, data in (("npy", b"x"), ("cls", b"not a number")):
                member = tarfile.TarInfo(f"{index:06d}.{ext}")
                member.size = len(data)
                archive.addfile(member, io.BytesIO(data))
    capsys.readouterr()
    main_here(program, "--resume", job="train_m", name="prog")  # the resume: in this process
    assert "resumed at epoch 1, step 4" in capsys.readouterr().out
    assert torch.load(last, weights_only=True)["steps"]["count"] == 6


def test_checking_real_data_imports_no_data_library(tmp_path: Path) -> None:
    """The compiler stays light: check reads CSV headers, sidecars, dataset_info.json and
    tar/.npy headers without pandas, numpy, datasets or webdataset (pyarrow: Parquet only)."""
    import subprocess
    import sys

    write_csv(tmp_path / "rows.csv")
    save_hf(tmp_path / "saved")
    write_shards(tmp_path / "s", shards=1)
    program = (
        table_block("rows.csv")
        + hf_block("saved").replace("dataset d:", "dataset h:")
        + shards_block('"s/shard-0000.tar"').replace("dataset d:", "dataset w:")
    )
    (tmp_path / "prog.aur").write_text(program)
    code = (
        "import sys\nfrom aurane.cli.main import main\n"
        "code = main(['check', 'prog.aur'])\n"
        "heavy = {'pandas', 'numpy', 'pyarrow', 'datasets', 'webdataset', 'tokenizers', 'torch'}\n"
        "print(sorted(heavy & set(sys.modules)), code)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert done.stdout.strip().splitlines()[-1] == "[] 0", done.stdout + done.stderr


def test_standalone_hf_dataset_reads_json_lines(tmp_path: Path) -> None:
    """Regression: an augmented module-level assignment was not copied by --standalone,
    so a standalone program lost the JSON-lines builder."""
    import json
    import os
    import subprocess
    import sys

    pytest.importorskip("datasets")
    rows = _rows(16)
    with (tmp_path / "rows.jsonl").open("w") as handle:
        for a, b, label in zip(rows["a"], rows["b"], rows["label"], strict=True):
            handle.write(json.dumps({"a": a, "b": b, "label": label}) + "\n")
    program = hf_block("rows.jsonl", extra="    classes = 2\n") + (
        "model M:\n    input_shape = (2,)\n    def forward(x):\n        x -> dense(2)\n\n"
        "train M on d:\n    epochs = 1\n    loss = cross_entropy\n"
    )
    (tmp_path / "prog.aur").write_text(program)
    made = run_cli("compile", "prog.aur", "--standalone", "-o", "prog.py", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    assert "aurane" not in [
        line.split()[1].split(".")[0]
        for line in (tmp_path / "prog.py").read_text().splitlines()
        if line.startswith(("import ", "from "))
    ]
    env = {**os.environ, "HF_DATASETS_CACHE": str(tmp_path / "cache"), "HF_HUB_OFFLINE": "1"}
    ran = subprocess.run(
        [sys.executable, "prog.py"], cwd=tmp_path, env=env, capture_output=True, text=True,
        timeout=300,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "2 batches" in ran.stdout, ran.stdout
