"""The one table of stable diagnostic codes. Feeds diagnostics, `aurane explain` and docs/errors.md."""

from __future__ import annotations

from dataclasses import dataclass

from aurane.diagnostics import Diagnostic, Label, Severity, Stage
from aurane.source import Span


@dataclass(frozen=True, slots=True)
class Code:
    code: str
    slug: str
    stage: Stage
    summary: str
    explanation: str
    example: str
    fix: str
    severity: Severity = "error"


_CODES: tuple[Code, ...] = (
    # parse
    Code(
        "P001",
        "tab-indent",
        "parse",
        "tab used for indentation",
        "Indentation must be spaces so that block structure never depends on tab width.",
        "model Net:\n\tinput_shape = (8,)",
        "Replace the tab with spaces (four per level).",
    ),
    Code(
        "P002",
        "bad-indent",
        "parse",
        "unexpected indentation",
        "A line is indented deeper than its block without a header ending in ':' above it,\n"
        "or dedents to a level that no enclosing block uses.",
        "model Net:\n    input_shape = (8,)\n        x = 1",
        "Align the line with the other lines of its block.",
    ),
    Code(
        "P003",
        "bad-continuation",
        "parse",
        "continuation line is not indented inside its statement",
        "A line starting with '->' continues the chain above it and must be indented deeper than\n"
        "the line that starts the chain.",
        "        x -> dense(4)\n      -> dense(2)",
        "Indent the '->' line under the chain it continues.",
    ),
    Code(
        "P004",
        "unterminated-string",
        "parse",
        "unterminated string literal",
        "A string opened with a quote must close with the same quote on the same line.",
        'lr = "0.1',
        "Add the closing quote.",
    ),
    Code(
        "P005",
        "unclosed-bracket",
        "parse",
        "unclosed bracket",
        "An opening '(', '[' or '{' was never closed before the end of the statement or file.",
        "x -> dense(4",
        "Add the matching closing bracket.",
    ),
    Code(
        "P006",
        "syntax",
        "parse",
        "invalid syntax",
        "The parser met a token it did not expect at this point of a statement.",
        "x -> -> dense(4)",
        "Follow the message: it names what was expected.",
    ),
    Code(
        "P007",
        "unknown-statement",
        "parse",
        "unknown top-level statement",
        "Top-level statements are use, constants, experiment, dataset, model, train and train_gan.",
        "modle Net:",
        "Check the spelling of the statement keyword.",
    ),
    Code(
        "P008",
        "bad-number",
        "parse",
        "invalid number literal",
        "Numbers are decimal integers or floats, with optional '_' separators and exponents.",
        "size = 1__0",
        "Write the number as a plain decimal literal.",
    ),
    Code(
        "P009",
        "bad-character",
        "parse",
        "character not allowed here",
        "The character is not part of the Aurane language outside strings and comments.",
        "x -> dense(4) $",
        "Remove the character or move it into a string or comment.",
    ),
    Code(
        "P010",
        "missing-colon",
        "parse",
        "block header without ':'",
        "Headers of model, dataset, experiment, train and def blocks end with ':'.",
        "model Net\n    input_shape = (8,)",
        "Add ':' at the end of the header.",
    ),
    Code(
        "P011",
        "limit",
        "parse",
        "a documented limit was exceeded",
        "Aurane bounds file size, nesting depth and identifier length so that no input can exhaust\n"
        "the compiler. See docs/limits.md.",
        "x = ((((((...))))))",
        "Simplify the expression or split the file.",
    ),
    Code(
        "P012",
        "after-return",
        "parse",
        "statement after return",
        "'return' ends a forward body; nothing may follow it.",
        "return out\nextra = dense(out, 2)",
        "Move the statement before 'return' or delete it.",
    ),
    Code(
        "P013",
        "empty-block",
        "parse",
        "block has no body",
        "A header ending in ':' must be followed by at least one line indented deeper.",
        "model Net:\nmodel Other:",
        "Add the block's lines, indented.",
    ),
    Code(
        "P014",
        "bad-escape",
        "parse",
        "invalid escape sequence in string",
        "Strings accept the escapes \\\\ \\' \\\" \\n \\t \\r \\0 \\xHH \\uHHHH \\UHHHHHHHH.",
        'name = "a\\q"',
        "Escape the backslash as \\\\ or use a valid escape.",
    ),
    Code(
        "P015",
        "bad-encoding",
        "parse",
        "source is not valid UTF-8 text",
        "Aurane sources are UTF-8 text without NUL bytes or lone surrogates.",
        "(a file saved as Latin-1)",
        "Re-save the file as UTF-8.",
    ),
    # resolve
    Code(
        "R001",
        "undefined-constant",
        "resolve",
        "undefined name",
        "A bare name in a value position refers to a constant; none of that name is visible here.",
        "x -> dense(hidden)",
        "Define the constant (globally or in the model) or fix the spelling.",
    ),
    Code(
        "R002",
        "duplicate-constant",
        "resolve",
        "constant defined twice",
        "Each constant name may be defined once per scope.",
        "width = 8\nwidth = 16",
        "Remove or rename one definition.",
    ),
    Code(
        "R003",
        "cyclic-constant",
        "resolve",
        "constants depend on each other in a cycle",
        "A constant's value may not depend, directly or indirectly, on itself.",
        "a = b\nb = a",
        "Give one of the constants a literal value.",
    ),
    Code(
        "R004",
        "bad-arithmetic",
        "resolve",
        "arithmetic that cannot be evaluated",
        "Compile-time arithmetic works on numbers only; division by zero and overflow are errors.",
        "width = 8 / 0",
        "Fix the expression.",
    ),
    Code(
        "R005",
        "constant-not-literal",
        "resolve",
        "constant value is not a literal",
        "Constants hold numbers, strings, booleans, None, tuples and lists of those.",
        "opt = adam(lr=0.1)",
        "Write the call where it is used.",
    ),
    # semantic
    Code(
        "S001",
        "unknown-operation",
        "semantic",
        "unknown operation",
        "Operations come from the catalog (see docs/language.md) or from models in the same file.",
        "x -> densee(2)",
        "Use a catalog operation; the hint suggests the closest name.",
    ),
    Code(
        "S002",
        "unknown-argument",
        "semantic",
        "unknown argument",
        "Every argument an operation or option does not list is an error, never ignored.",
        "x -> conv2d(4, kernal=3)",
        "Use one of the listed argument names.",
    ),
    Code(
        "S003",
        "argument-type",
        "semantic",
        "argument has the wrong type",
        "Arguments are checked against the catalog: integers, floats, booleans, strings, pairs.",
        "x -> dense(4, bias=1)",
        "Write a value of the expected type (booleans are true/false).",
    ),
    Code(
        "S004",
        "argument-range",
        "semantic",
        "argument out of range",
        "Some arguments have ranges: dropout p in [0, 1), positive sizes, betas in [0, 1).",
        "x -> dropout(1.5)",
        "Use a value inside the range given in the message.",
    ),
    Code(
        "S005",
        "missing-argument",
        "semantic",
        "required argument missing",
        "The operation or option needs this argument and it has no default.",
        "x -> dense()",
        "Pass the argument.",
    ),
    Code(
        "S006",
        "too-many-arguments",
        "semantic",
        "too many positional arguments",
        "The operation takes fewer positional arguments than were given.",
        "x -> dense(4, 5, 6)",
        "Remove the extra arguments or pass them by keyword.",
    ),
    Code(
        "S007",
        "undefined-tensor",
        "semantic",
        "undefined tensor",
        "Inputs of graph operations must be defined earlier in the forward body.",
        "y = dense(z, 4)",
        "Use the forward parameter or a value assigned above.",
    ),
    Code(
        "S008",
        "duplicate-definition",
        "semantic",
        "duplicate definition",
        "Model and dataset names, fields in a block and keyword arguments are unique.",
        "model Net:\n...\nmodel Net:",
        "Rename or remove one of them.",
    ),
    Code(
        "S009",
        "recursive-model",
        "semantic",
        "models use each other recursively",
        "A model used as an operation may not (directly or indirectly) use itself.",
        "model A: x -> B()\nmodel B: x -> A()",
        "Break the cycle.",
    ),
    Code(
        "S010",
        "unknown-field",
        "semantic",
        "unknown field",
        "Each block accepts a fixed set of fields; unknown ones are errors, never ignored.",
        "train Net on data:\n    epocs = 3",
        "Use one of the listed fields.",
    ),
    Code(
        "S011",
        "unknown-name",
        "semantic",
        "unknown catalog name",
        "Losses, metrics, optimizers, schedulers, dtypes, activations and transforms come from\n"
        "catalogs.",
        "loss = cross_entrophy",
        "Use a catalog name; the hint suggests the closest one.",
    ),
    Code(
        "S012",
        "undefined-reference",
        "semantic",
        "reference to an undefined model or dataset",
        "train, validate_on, test_on and train_gan name models and datasets of the same file.",
        "train Net on nowhere:",
        "Define the dataset or model, or fix the spelling.",
    ),
    Code(
        "S013",
        "bad-field-value",
        "semantic",
        "field has an invalid value",
        "The field's value has the wrong type or is outside its allowed values.",
        'device = "gpu"',
        "Use one of the values listed in the message.",
    ),
    Code(
        "S014",
        "missing-field",
        "semantic",
        "required field missing",
        "A model that stands alone (trained or selected) needs input_shape; other blocks have\n"
        "required fields too.",
        "model Net:\n    def forward(x): ...",
        "Add the field.",
    ),
    Code(
        "S015",
        "reserved-name",
        "semantic",
        "name is reserved",
        "Names the generated program relies on (torch, nn, F, self, Python keywords, dunders)\n"
        "cannot be redefined.",
        "use numpy as nn",
        "Choose another name.",
    ),
    Code(
        "S016",
        "bad-suffix",
        "semantic",
        "suffix cannot be applied",
        "Suffixes are activations or .residual, applied to an operation.",
        "x -> dense(4).rellu",
        "Use an activation from the catalog or .residual.",
    ),
    Code(
        "S017",
        "bad-forward",
        "semantic",
        "invalid forward body",
        "A model has exactly one 'def forward(x):' whose body produces an output.",
        "model Net:\n    input_shape = (4,)",
        "Add a forward body.",
    ),
    Code(
        "S018",
        "unused-value",
        "semantic",
        "value computed but never used",
        "A value assigned in the forward body is never read and is not the output.",
        "extra = dense(x, 4)",
        "Use the value or delete the statement.",
        "warning",
    ),
    Code(
        "S019",
        "bad-use",
        "semantic",
        "invalid use statement",
        "'use' imports a dotted module path, optionally 'as' an alias.",
        "use torch as nn",
        "Choose an alias the generated code does not rely on.",
    ),
    # type
    Code(
        "T001",
        "shape-mismatch",
        "type",
        "shapes do not match",
        "The operation needs its inputs to have compatible shapes; the labels show where each\n"
        "shape came from.",
        "out = add(dense(x, 4), dense(x, 2))",
        "Make the shapes agree, e.g. with a dense layer.",
    ),
    Code(
        "T002",
        "bad-rank",
        "type",
        "input has the wrong number of axes",
        "Each operation accepts inputs of given ranks (batch excluded), e.g. conv2d needs (C, H, W).",
        "x -> conv2d(8)   # with input_shape = (8,)",
        "Reshape the input or use another operation.",
    ),
    Code(
        "T003",
        "dtype-mismatch",
        "type",
        "wrong dtype",
        "Embeddings need integer inputs; other layers need floating inputs; merges need equal dtypes.",
        "input_dtype = float32\nx -> embedding(100, 8)",
        "Change input_dtype or the operation.",
    ),
    Code(
        "T004",
        "bad-axis",
        "type",
        "invalid axis",
        "Axis arguments count the runtime batch axis (dim=1 is the first sample axis, -1 the\n"
        "last); the batch axis itself is refused.",
        "concat(a, b, dim=0)",
        "Use dim=1 or a negative axis.",
    ),
    Code(
        "T005",
        "bad-size",
        "type",
        "output size would not be positive",
        "A kernel larger than its (padded) input, or a pooling window too large, leaves no output.",
        "x -> conv2d(8, kernel=5)   # on a 4x4 input",
        "Use a smaller kernel or add padding.",
    ),
    Code(
        "T006",
        "element-count",
        "type",
        "element count not preserved",
        "reshape must keep the number of elements per sample.",
        "x -> reshape(4, -1)   # on 6 elements",
        "Pick sizes whose product equals the input's.",
    ),
    Code(
        "T007",
        "not-divisible",
        "type",
        "sizes do not divide",
        "Attention heads must divide dim; groups must divide channel counts.",
        "multihead_attention(heads=4, dim=30)",
        "Pick sizes that divide evenly.",
    ),
    Code(
        "T008",
        "gan-boundary",
        "type",
        "generator output does not fit the discriminator",
        "The generator's output shape must equal the discriminator's input shape.",
        "train_gan G and D on data:",
        "Make G's output shape match D's input_shape.",
    ),
    Code(
        "T009",
        "loss-output",
        "type",
        "model output does not fit the loss",
        "Losses impose conditions on the model output, e.g. BCE needs probabilities.",
        "generator_loss = bce  # with a discriminator ending in dense(1)",
        "Add .sigmoid or use bce_with_logits.",
    ),
    Code(
        "T010",
        "block-input",
        "type",
        "block called with a shape its input_shape refuses",
        "A model used as an operation with its own input_shape must be called with that shape.",
        "x -> Block()",
        "Call it with a matching input or drop its input_shape.",
    ),
)

CODES: dict[str, Code] = {c.code: c for c in _CODES}


def diag(
    code: str,
    message: str,
    span: Span | None,
    *,
    hint: str | None = None,
    labels: tuple[Label, ...] = (),
    severity: Severity | None = None,
) -> Diagnostic:
    """Build a diagnostic whose stage and default severity come from the code table."""
    entry = CODES[code]
    return Diagnostic(
        code=code,
        stage=entry.stage,
        severity=severity or entry.severity,
        message=message,
        span=span,
        hint=hint,
        labels=labels,
    )


def explain(code: str) -> str | None:
    entry = CODES.get(code.strip().upper())
    if entry is None:
        return None
    return (
        f"{entry.code} ({entry.slug}, {entry.stage} stage, {entry.severity}): {entry.summary}\n\n"
        f"{entry.explanation}\n\nexample:\n"
        + "\n".join("    " + line for line in entry.example.splitlines())
        + f"\n\nfix: {entry.fix}\n"
    )
