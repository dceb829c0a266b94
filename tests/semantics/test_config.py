"""The configuration catalog's shared helpers: option names, loss names, block field tables."""

from __future__ import annotations

import pytest

from aurane.ir.jobs import _loss_field
from aurane.ops import rules
from aurane.semantics import config
from aurane.source import Span
from aurane.syntax import ast

AT = Span(1, 1, 1, 2)


@pytest.mark.parametrize(
    ("expr", "name"),
    [
        (ast.Name("adam", AT), "adam"),
        (ast.String("adam", AT), "adam"),
        (ast.Call("adam", AT, (), (), (), AT), "adam"),
        (ast.Number(3, "3", AT), None),
        (ast.ListExpr((ast.Name("adam", AT),), AT), None),
    ],
)
def test_option_name_reads_names_strings_and_calls(expr: ast.Expr, name: str | None) -> None:
    assert config.option_name(expr) == name


@pytest.mark.parametrize(
    ("written", "loss"),
    [
        ("bce", "bce"),
        ("binary_cross_entropy", "bce"),
        ("cross_entropy_loss", "cross_entropy"),
        ("nope", None),
        ("", None),
        (None, None),
    ],
)
def test_canonical_loss_resolves_aliases(written: str | None, loss: str | None) -> None:
    assert config.canonical_loss(written) == loss


def test_gan_loss_field_keeps_an_unknown_name_as_written() -> None:
    def field(value: ast.Expr) -> ast.Field:
        return ast.Field("discriminator_loss", AT, value, AT)

    known = field(ast.Call("bce_loss", AT, (), (), (), AT))
    assert _loss_field((known,), "discriminator_loss") == ("bce", known)
    unknown = field(ast.String("hinge", AT))
    assert _loss_field((unknown,), "discriminator_loss") == ("hinge", unknown)
    number = field(ast.Number(1, "1", AT))
    assert _loss_field((number,), "discriminator_loss") == (None, number)
    assert _loss_field((), "discriminator_loss") == (None, None)


def test_block_tables_name_each_block_and_only_datasets_take_other_fields() -> None:
    tables = config.BLOCK_TABLES
    assert tables[ast.Experiment] == (config.EXPERIMENT_TABLE, False)
    assert tables[ast.Dataset] == (config.DATASET_TABLE, True)
    assert tables[ast.Train] == (config.TRAIN_TABLE, False)
    assert tables[ast.TrainGan] == (config.GAN_TABLE, False)
    assert len(tables) == 4


def test_tables_list_each_spec_under_its_name_and_aliases() -> None:
    assert config.TRAIN_TABLE["learning_rate"] is config.TRAIN_TABLE["lr"]
    assert config.DATASET_TABLE["batch_size"] is config.DATASET_TABLE["batch"]
    assert config.LOSS_TABLE["mse_loss"] is config.LOSS_TABLE["mse"]
    for table in (config.GAN_TABLE, config.OPTIMIZER_TABLE, config.SCHEDULER_TABLE):
        assert all(name == spec.name or name in spec.aliases for name, spec in table.items())


def test_dtype_sets() -> None:
    assert config.FLOAT_DTYPES is rules.FLOAT_DTYPES
    inputs = config.INPUT_INT_DTYPES
    assert inputs == {"int32", "int64"}
    assert inputs <= set(config.DTYPES) & rules.INT_DTYPES
    assert "uint8" in rules.INT_DTYPES and "uint8" not in config.DTYPES


@pytest.mark.parametrize(
    ("check", "good", "bad", "message"),
    [
        (config.positive, 0.5, 0, "must be positive"),
        (config.unit_interval_open, 0, 1, "must be in [0, 1)"),
    ],
)
def test_range_checks_are_the_catalog_rules(
    check: rules.Check, good: float, bad: float, message: str
) -> None:
    assert check(good) is None
    assert check(bad) == message
