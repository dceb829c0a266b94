"""``aurane import`` of Hugging Face ``BertModel``, ``GPT2LMHeadModel`` and
``LlamaForCausalLM`` at small configurations, built from config objects (never downloaded):
each lift is exact (strict state dict, equal outputs), and reads as the zoo's programs do:
GPT-2's head tied to its token embedding, Llama's rotary positions, causal attention and
grouped-query heads written as the catalog's operations."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from aurane.lift.pipeline import ImportResult, lift_module  # noqa: E402
from tests.lift.cases import Case, build_case, huggingface_cases  # noqa: E402

CASES = {case.name: case for case in huggingface_cases()}


def _lift(case: Case) -> ImportResult:
    torch.set_num_threads(1)
    model, recorder = build_case(case)
    return lift_module(
        model,
        input_shape=case.input_shape,
        input_dtype=case.input_dtype,
        constructors=recorder.arguments,
    )


def _exact(result: ImportResult) -> str:
    assert result.failure is None and not result.gaps, result.problem
    assert result.check is not None and result.exact, result.check.problem
    assert result.text is not None
    return result.text


def test_bert_imports_exactly_with_two_inputs_returning_both_outputs() -> None:
    """issue 26 item 1: token ids and token types as two inputs (attention_mask left at its
    default), and both of BertModel's outputs returned and compared."""
    torch.set_num_threads(1)
    model, recorder = build_case(CASES["bert"])
    result = lift_module(
        model,
        input_shape={"input_ids": (8,), "token_type_ids": (8,)},
        constructors=recorder.arguments,
    )
    text = _exact(result)
    assert result.tracer == "export"  # symbolic tracing fails on transformers 5's forwards
    assert result.output_names == ["last_hidden_state", "pooler_output"]
    assert result.dropped_outputs == []
    assert "input_shape = {input_ids: (8,), token_type_ids: (8,)}" in text
    assert "input_dtype = {input_ids: int64, token_type_ids: int64}" in text
    assert "def forward(input_ids, token_type_ids):" in text
    assert text.rstrip().endswith("return last_hidden_state, pooler_output")
    # modules of two inputs are blocks called in graph form, as the zoo's programs do
    assert "h = BertEmbeddings(input_ids, token_type_ids) as embeddings" in text
    assert "y -> embedding(2, 32) as token_type_embeddings" in text
    assert "model BertSelfOutput:\n    def forward(x, y):" in text
    assert "return BertSelfOutput(h, x) as output" in text
    assert "repeat(BertLayer(), 2) as layer" in text


def test_gpt2_imports_exactly_with_its_head_tied_and_conv1d_layers() -> None:
    text = _exact(_lift(CASES["gpt2"]))
    assert "tie=transformer.wte) as lm_head" in text
    assert "dense(96, transposed=true) as c_attn" in text
    assert 'gelu(approximate="tanh")' in text
    assert "causal=true" in text


def test_llama_imports_exactly_with_rotary_positions_and_grouped_query_heads() -> None:
    text = _exact(_lift(CASES["llama"]))
    assert text.count("rotary_embedding()") == 2
    assert "scaled_dot_product_attention(q, k, v, causal=true)" in text
    assert "repeat_heads" not in text and "expand" not in text  # keys and values unrepeated
    assert "rms_norm(eps=1e-06) as input_layernorm" in text
