"""A parameterised block that no model calls is still checked (issue 10): with its
defaults when every parameter has one, else with placeholders that keep arity, keyword,
unknown-operation and kind errors but not range errors on values the call would give."""

from __future__ import annotations

from tests.helpers import front

HEAD = "use torch\n\nmodel Net:\n    input_shape = (4,)\n    def forward(x):\n        x -> dense(3)\n\n"


def _errors(body: str) -> list[tuple[str, int, str]]:
    result = front(HEAD + body)
    return [(d.code, d.span.line - 7, d.message) for d in result.diagnostics if d.is_error]


def test_defaults_check_the_body_like_a_call() -> None:
    found = _errors(
        "model A(width=8, p=0.5):\n"
        "    def forward(x):\n"
        "        x -> dense(width, biass=true) -> dropout(p) -> frobnicate(3)\n"
    )
    assert [(c, line) for c, line, _ in found] == [("S002", 3), ("S001", 3)]


def test_default_values_are_range_checked() -> None:
    found = _errors("model A(p=1.5):\n    def forward(x):\n        x -> dropout(p)\n")
    assert [c for c, _, _ in found] == ["S004"], found


def test_placeholders_keep_arity_keyword_and_kind_errors() -> None:
    found = _errors(
        "model B(width, rate, flag: bool, k: int):\n"
        "    def forward(x):\n"
        "        x -> conv2d(width, kernel=k, bias=flag) -> dropout(rate)\n"
        "          -> dense(4, bias=k) -> dense(4, 5, 6) -> C(h=3)\n"
        "\n"
        "model C(w=2):\n"
        "    def forward(x):\n"
        "        x -> dense(w, bias=0)\n"
    )
    codes = sorted((c, line) for c, line, _ in found)
    # bias=k: k is an int; dense(4, 5, 6): 5 is no boolean and one argument too many;
    # C(h=3): no such parameter; C's own body (reached by no model) with its default
    assert codes == [("S003", 4), ("S003", 4), ("S003", 8), ("S006", 4), ("S041", 4)], found


def test_unknown_values_are_not_range_or_kind_checked() -> None:
    found = _errors(
        "model D(width, rate):\n"
        "    def forward(x):\n"
        "        x -> dense(width, bias=width) -> dropout(rate) -> dense(2 * width)\n"
    )
    assert found == []


def test_called_blocks_are_checked_by_their_calls_only() -> None:
    source = (
        "use torch\n\nmodel Net:\n    input_shape = (4,)\n    def forward(x):\n"
        "        x -> A(3)\n\n"
        "model A(width):\n    def forward(x):\n        x -> dense(width, bias=false)\n"
    )
    result = front(source)
    assert not [d for d in result.diagnostics if d.is_error]
    assert result.graphs["Net"].nodes[0].subgraph is not None
