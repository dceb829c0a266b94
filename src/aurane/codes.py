"""The one table of stable diagnostic codes. Feeds diagnostics, `aurane explain` and docs/errors.md."""

from __future__ import annotations

from aurane.diagnostics import Diagnostic, Label, Severity, Stage
from aurane.records import record
from aurane.source import Span


@record(frozen=True, slots=True)
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
    Code(
        "P040",
        "name-bound-twice",
        "parse",
        "a name is bound twice in one statement",
        "`a, b = chunk(x, 2)` binds one name per piece; each name appears once.",
        "a, a = chunk(x, 2, dim=-1)",
        "Give each piece its own name.",
    ),
    Code(
        "P041",
        "bad-dict",
        "parse",
        "a malformed dict literal",
        "A dict `{name: value, ...}` keys each value by a name (a model's inputs in\n"
        "input_shape and input_dtype); each key is a name, written once, followed by ':'.",
        "model M:\n    input_shape = {ids: (8,), ids: (8,)}",
        "Write each key once as a name followed by ':' and its value.",
    ),
    Code(
        "P042",
        "forward-input-twice",
        "parse",
        "a forward names one input twice",
        "Each parameter of `def forward(a, b):` is one input of the model, so names differ.",
        "def forward(x, x):",
        "Give each input its own name.",
    ),
    Code(
        "P043",
        "required-after-default",
        "parse",
        "a required forward input follows one with a default, or the first has one",
        "As in Python, inputs with a default (`mask=ones`) come after the required ones; the\n"
        "first input is required, since a default is built at its batch size.",
        "def forward(mask=ones, ids):",
        "Put the inputs with defaults last.",
    ),
    Code(
        "P044",
        "bad-input-default",
        "parse",
        "a forward input's default is not ones, zeros, none or a number",
        "An optional input's default is a tensor the model builds when the caller leaves\n"
        "the input out: `ones` or `zeros` (shaped and typed as input_shape/input_dtype\n"
        "declare), a number (filled with it), or `none`.",
        "def forward(ids, mask=relu):",
        "Write ones, zeros, none or a number.",
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
        "Constants hold numbers, strings, booleans, None, tuples and lists of those, and\n"
        "the results of the pure constant functions len, range, enumerate, zip, min, max,\n"
        "abs, round, ceil, floor, sqrt, int, float and make_divisible (torchvision's\n"
        "_make_divisible), computed at compile time. Any other call (an operation, a\n"
        "configuration entry) is no constant value.",
        "opt = adam(lr=0.1)",
        "Write a configuration call in the field that takes it (optimizer = adam(lr=0.1)),\n"
        "an operation in forward; compute numbers with arithmetic and the functions above.",
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
        "'use' imports a dotted module path, optionally 'as' an alias. The path is dotted\n"
        "identifiers, none a keyword or a dunder, ASCII after NFKC normalisation. The name it\n"
        "binds (the alias, else the first part) must not replace a keyword, builtin or name\n"
        "the generated program binds (nn, F, rt, random, np, ...) nor, in a program with\n"
        "training code, a name the training functions bind (seed, model, dataset, ...).\n"
        "Names are compared after NFKC normalisation, as Python compares them.",
        "use os as random",
        "Choose another alias (use os as system_os), or import the module under one.",
    ),
    Code(
        "S040",
        "bad-block-parameter",
        "semantic",
        "invalid parameter in a model header",
        "A parameterised block declares 'model Name(p, q=1):'. Each parameter has its own\n"
        "name (an ASCII identifier the generated Python can use as a constructor argument),\n"
        "an optional type (int, float, bool or str) and an optional constant default;\n"
        "parameters with defaults come last. A block takes its input shape from each call,\n"
        "so it declares no input_shape.",
        "model Block(width, width):",
        "Rename the parameter, move defaults last, use int, float, bool or str, or remove\n"
        "the block's input_shape.",
    ),
    Code(
        "S041",
        "unknown-block-argument",
        "semantic",
        "unknown argument in a block call",
        "A block call passes only the parameters its model declares.",
        "model Block(width):\n    ...\n... x -> Block(128, depth=2)",
        "Use one of the declared parameter names (see the model header).",
    ),
    Code(
        "S042",
        "missing-block-argument",
        "semantic",
        "block call misses a parameter",
        "Every parameter without a default must be given in each call of the block.",
        "model Block(width):\n    ...\n... x -> Block()",
        "Pass the parameter, positionally or as width=...",
    ),
    Code(
        "S043",
        "too-many-block-arguments",
        "semantic",
        "block call passes too many or repeated arguments",
        "A block call passes at most one value per declared parameter.",
        "model Block(width):\n    ...\n... x -> Block(64, 128)",
        "Drop the extra argument or declare another parameter.",
    ),
    Code(
        "S044",
        "duplicate-layer-name",
        "semantic",
        "two layers have the same name",
        "'as NAME' sets a layer's attribute in the generated module; each name (and each\n"
        "container path such as layer1.0) names exactly one layer of a model.",
        "h = conv2d(x, 8) as conv1\nh = conv2d(h, 8) as conv1",
        "Give each layer its own name.",
    ),
    Code(
        "S045",
        "invalid-layer-name",
        "semantic",
        "a layer name Python or PyTorch cannot use",
        "Layer names become attributes of an nn.Module: each part of a dotted path is an\n"
        "ASCII identifier or a number, and no part is a Python keyword or an attribute\n"
        "nn.Module, nn.ModuleDict or nn.Sequential already has (forward, train, keys, ...).\n"
        "A name cannot be both a layer and a container (conv1 and conv1.0), and a\n"
        "container holding a parameter or a buffer is a plain nn.Module whose children\n"
        "need word names.",
        "h = conv2d(x, 8) as forward",
        "Choose another name.",
    ),
    Code(
        "S046",
        "unnameable-step",
        "semantic",
        "this operation cannot be part of a named layer or chain",
        "A named chain becomes one nn.Sequential, so each of its steps must be a module\n"
        "applied to the previous step's output: layers, activations, flatten, dropout.\n"
        "Operations joining several tensors or returning extra state cannot be named.",
        "h = (x -> dense(8).residual) as proj",
        "Name the layers one by one, or take the operation out of the chain.",
    ),
    Code(
        "S047",
        "bad-tie",
        "semantic",
        "tie= does not name a layer whose weight can be shared",
        "dense(..., tie=path) shares its weight with the embedding or dense layer named\n"
        "path elsewhere in the same model.",
        "x -> dense(100, tie=wte)   # no layer is named wte",
        "Name the embedding with 'as wte', or drop tie=.",
    ),
    Code(
        "T040",
        "block-argument-type",
        "type",
        "block argument of the wrong type",
        "A parameter annotated int, float, bool or str (or whose default has that type)\n"
        "accepts only values of that type (an int is accepted for float).",
        "model Block(width: int):\n    ...\n... x -> Block(1.5)",
        "Pass a value of the declared type.",
    ),
    Code(
        "T041",
        "tie-shape",
        "type",
        "tied weights have different shapes",
        "Tying dense(V) to an embedding needs the embedding's table (V, D) to equal the\n"
        "dense weight (out V, in D).",
        "x -> dense(100, tie=wte)   # wte = embedding(50, 32)",
        "Make the vocabulary and width agree, or drop tie=.",
    ),
    Code(
        "S080",
        "dataset-source-not-allowed",
        "semantic",
        "dataset source is not an allowed dataset class",
        "A dataset's 'from' line becomes a constructor call when the generated program runs,\n"
        "so it must name a dataset class: aurane.data.<Class>, torchvision.datasets.<Class>\n"
        "(their dataset classes), or a class under a module the program imports with 'use'\n"
        "(checked to be a torch Dataset subclass when the program runs). Nothing else of\n"
        "torch, torchvision, aurane, the standard library or a few well-known packages is a\n"
        "source, 'use' line or not: 'use torch' does not make torch.load one. Names are\n"
        "NFKC-normalised first, as Python reads them, and must then be ASCII. See\n"
        "docs/security.md.",
        "use torch\ndataset d:\n    from torch.load",
        "Name a dataset class, or 'use' the module that defines yours.",
    ),
    Code(
        "S081",
        "conflicting-arguments",
        "semantic",
        "arguments that torch refuses together",
        "Some options are valid alone but not together, exactly as torch checks them when it\n"
        "builds or steps the object: SGD's nesterov needs momentum > 0 and dampening = 0;\n"
        "warmup_cosine's warmup_steps may not exceed max_steps.",
        "optimizer = sgd(lr=0.1, nesterov=true)",
        "Change one of the arguments, e.g. add momentum=0.9.",
    ),
    Code(
        "S100",
        "no-models",
        "semantic",
        "the program defines no models",
        "A program without a 'model' block compiles to a module with no network in it, and\n"
        "an empty file compiles to an empty module. Usually the file is not the one meant,\n"
        "or it is still a draft.",
        "dataset d:\n    from aurane.data.SyntheticImages",
        "Add a model block (see 'aurane init' for a starter program), or check the file name.",
        "warning",
    ),
    Code(
        "T090",
        "size-past-int64",
        "type",
        "a size past torch's int64 sizes",
        "torch stores sizes, element counts and parameter counts as 64-bit integers; a shape\n"
        "or layer whose count passes 2**63 - 1 cannot be built, so it is refused here instead\n"
        "of compiling to a layer that overflows.",
        "x -> upsample(scale_factor=1e308)",
        "Check the sizes.",
    ),
    Code(
        "T091",
        "setting-without-effect",
        "type",
        "a setting the model would ignore",
        "input_padding_idx builds the padding mask that self-attention reads; a model without\n"
        "self-attention would silently ignore it.",
        "model Net:\n    input_dtype = int64\n    input_padding_idx = 0   # no attention",
        "Remove the setting, or add the layer that uses it.",
    ),
    Code(
        "T092",
        "data-model-input",
        "type",
        "the dataset's samples do not fit the model's input",
        "A job feeds each batch of its dataset to the model as it is: the sample shape and\n"
        "dtype the dataset yields (after its transforms, see docs/training.md) must equal\n"
        "the model's input_shape and input_dtype. The labels say where each side came from.",
        "dataset d:\n    from aurane.data.SyntheticImages\n    image_size = (3, 16, 16)\n"
        "model Net:\n    input_shape = (1, 16, 16)",
        "Make the dataset's image_size (or transforms) and the model's input_shape agree.",
    ),
    Code(
        "T093",
        "data-targets-loss",
        "type",
        "the model's output does not fit the dataset's targets under the loss",
        "Class losses need one logit per class: a head with fewer outputs than the dataset's\n"
        "num_classes fails on the first larger label. Class losses need integer labels; binary\n"
        "and regression losses need outputs of the targets' shape (never broadcast; a (1,)\n"
        "output pairs with scalar binary targets); bce needs targets in [0, 1].",
        "num_classes = 10\n...\n    x -> dense(4)   # loss = cross_entropy",
        "Make the head's size equal the number of classes, or pick the loss the targets need.",
    ),
    Code(
        "T094",
        "metric-task",
        "type",
        "a metric that does not apply to the job's loss",
        "The loss decides the task: class losses (cross_entropy, nll) take accuracy, topN,\n"
        "precision, recall, f1, auc; binary losses (bce) also binary_accuracy, mse, mae;\n"
        "regression losses (mse, mae, huber) take mse, mae. topN_accuracy needs at least N\n"
        "classes.",
        "loss = mse\nmetrics = [accuracy]",
        "Drop the metric or change the loss.",
    ),
    Code(
        "T095",
        "transform-input",
        "type",
        "a dataset transform that cannot apply to what the dataset yields",
        "ToTensor converts PIL images (not tensors); Normalize needs float tensors with 1 or C\n"
        "means; RandomCrop needs an image at least as large as the crop; a DataLoader cannot\n"
        "batch PIL images, so torchvision transforms must end in ToTensor.",
        "dataset d:\n    from torchvision.datasets.MNIST\n    transforms = [Normalize((0.5,), (0.5,))]",
        "Fix the transform list, e.g. add ToTensor() first.",
    ),
    Code(
        "T096",
        "padding-mask-length",
        "type",
        "the padding mask no longer matches the sequence before attention",
        "input_padding_idx builds a (batch, sequence) mask from the input tokens; an operation\n"
        "that changes the sequence length between the input and self-attention leaves the\n"
        "mask the wrong length.",
        "x -> embedding(100, 16) -> maxpool1d(2) -> multihead_attention(heads=2, dim=16)",
        "Keep the sequence length until attention, or drop input_padding_idx.",
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
        "Make the shapes agree: a dense layer for features, a 1x1 convolution for the\n"
        "channels of a residual's shortcut, pooling or a strided convolution for sizes.",
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
    Code(
        "T080",
        "rotary-odd-dim",
        "type",
        "rotary embedding needs an even head size",
        "rotary_embedding rotates the two halves of the last axis (rotate-half), so that axis\n"
        "must have an even size.",
        "q -> rotary_embedding()   # on (heads, sequence, 7)",
        "Use an even head size.",
    ),
    Code(
        "T081",
        "kv-heads",
        "type",
        "query heads are not a multiple of the key/value heads",
        "Grouped-query attention shares each key/value head among heads // kv_heads query\n"
        "heads, so the key/value heads must divide the query heads.",
        "scaled_dot_product_attention(q, k, v)   # q (8, S, 64), k and v (3, S, 64)",
        "Pick a number of key/value heads that divides the query heads.",
    ),
    Code(
        "T082",
        "causal-lengths",
        "type",
        "causal attention over sequences of different lengths",
        "A causal mask orders the positions of one sequence: queries and keys must have the\n"
        "same length.",
        "multihead_attention(x, memory, heads=2, dim=8, causal=true)   # 5 queries, 7 keys",
        "Drop causal for cross-attention, or attend over sequences of equal length.",
    ),
    Code(
        "T083",
        "kv-width-without-memory",
        "type",
        "key/value width given to self-attention",
        "kdim and vdim describe a memory input of another width (cross-attention); in\n"
        "self-attention keys and values have the model width dim.",
        "x -> multihead_attention(heads=2, dim=8, kdim=4)",
        "Drop kdim/vdim, or pass the memory: multihead_attention(x, memory, ...).",
    ),
    # ops-tensor (issue 10)
    Code(
        "T060",
        "broadcast-mismatch",
        "type",
        "shapes do not broadcast",
        "multiply, subtract, divide, matmul (leading axes), add(broadcast=true) and expand\n"
        "stretch size-1 axes only: on every axis the sizes are equal or one of them is 1.\n"
        "Both inputs carry the batch axis, so their ranks must be equal too.",
        "multiply(x, gate)   # (64, 8, 8) and (32, 1, 1)",
        "Make each axis equal or 1 on one side, e.g. with a dense layer or a reshape.",
    ),
    Code(
        "T062",
        "squeeze-size",
        "type",
        "squeeze of an axis whose size is not 1",
        "squeeze removes one size-1 axis. PyTorch silently returns the input unchanged when\n"
        "the axis is larger; Aurane refuses, because the shapes after it would be wrong.",
        "x -> squeeze(1)   # on (4, 8)",
        "Squeeze a size-1 axis, or use select / reshape.",
    ),
    Code(
        "T063",
        "index-range",
        "type",
        "index out of range",
        "select's index must lie within its axis; a piece index of split/chunk within the\n"
        "number of pieces.",
        "x -> select(dim=1, index=5)   # on (5, 8)",
        "Use an index from -size to size - 1.",
    ),
    Code(
        "T064",
        "unbound-pieces",
        "type",
        "several outputs bound to one name",
        "split and chunk give several tensors. Bind each to a name in one statement,\n"
        "`a, b = chunk(x, 2, dim=-1)`, or pick one piece with index=.",
        "h = chunk(x, 2, dim=-1)",
        "Write a, b = chunk(x, 2, dim=-1).",
    ),
    Code(
        "T065",
        "parameter-input",
        "type",
        "parameter given an input tensor",
        "parameter(shape) is a learned tensor of its own; it reads no input, so it cannot be a\n"
        "chain step.",
        "x -> parameter((1, 768))",
        "Write it as a graph statement: cls = parameter((1, 768)).",
    ),
    Code(
        "S065",
        "piece-count",
        "semantic",
        "names on the left do not match the pieces",
        "`a, b = chunk(x, 2)` binds one name per piece. The number of names must equal the\n"
        "number of pieces split or chunk gives, and only split and chunk have several outputs.",
        "a, b, c = chunk(x, 2, dim=-1)",
        "Bind exactly one name per piece.",
    ),
    # verify (issue 13): static claims that torch contradicts at run time: compiler bugs
    Code(
        "T110",
        "verify-shape",
        "type",
        "run-time shape differs from the inferred shape (compiler bug)",
        "`aurane verify` ran the generated module and a value's shape is not the one the IR\n"
        "claims. Every consumer (code generation, profile, diagrams) trusts the IR, so this\n"
        "is a bug in the compiler's shape rule for the operation at this span.",
        "x -> conv2d(8, kernel=3)",
        "Report it with the file; until fixed, do not trust shapes printed for this model.",
    ),
    Code(
        "T111",
        "verify-dtype",
        "type",
        "run-time dtype differs from the inferred dtype (compiler bug)",
        "`aurane verify` observed a dtype other than the one the IR claims for this value.",
        "x -> embedding(100, 16)",
        "Report it with the file.",
    ),
    Code(
        "T112",
        "verify-parameters",
        "type",
        "run-time parameter count differs from the IR's (compiler bug)",
        "The submodule built for this operation holds a different number of parameters\n"
        "than the IR (and therefore `profile`) counts.",
        "x -> dense(10)",
        "Report it with the file; `profile` figures for this model are wrong until fixed.",
    ),
    Code(
        "T113",
        "verify-runtime-error",
        "type",
        "the generated module failed on inputs of its declared type (compiler bug)",
        "A program the checker accepts must run; the generated module raised an error while\n"
        "`aurane verify` ran it on inputs of the declared shape and dtype.",
        "x -> dense(10)",
        "Report it with the file.",
    ),
    # symbolic sizes and budgets (issue 13)
    Code(
        "S110",
        "bad-dim",
        "semantic",
        "a symbolic size declaration is malformed",
        "`seq = dim(min, max)` declares a size that stays symbolic through shape inference.\n"
        "Both bounds are positive integers (max may be omitted: unbounded) and max >= min.",
        "seq = dim(0, 2048)",
        "Write dim(), dim(1, 2048) or dim(max=2048).",
    ),
    Code(
        "S111",
        "symbolic-size-used",
        "semantic",
        "a symbolic size is used where a concrete value is needed",
        "A size declared with dim(...) may appear only in `input_shape` (alone or in\n"
        "+ - * // arithmetic). Operation arguments and other constants need concrete numbers.",
        "seq = dim(1, 64)\nmodel M:\n    input_shape = (seq, 8)\n"
        "    def forward(x):\n        x -> positional_encoding(max_len=seq)",
        "Write a number (the largest size you need), or derive the size from the input.",
    ),
    Code(
        "S112",
        "bad-budget",
        "semantic",
        "a budget line is malformed",
        "`budget params <= 25M, macs <= 4.1G, activations <= 2GiB at batch 32` limits a\n"
        "model's parameters, multiply-accumulates per sample and activation memory. Each item\n"
        "is `NAME <= AMOUNT` with an amount such as 25M, 4.1G, 2GiB or 1_000_000.",
        "budget params <= lots",
        "Use params, macs, flops or activations with a number and an optional unit.",
    ),
    # training jobs and their command-line overrides (issue 25)
    Code(
        "S130",
        "conflicting-train-fields",
        "semantic",
        "train fields that do not work together",
        "Some train fields need another one, or a model of a certain kind:\n"
        "eval_every_steps validates, so it needs validate_on; channels_last stores images\n"
        "as (batch, height, width, channels) in memory, so the model's input_shape must be\n"
        "(channels, height, width); fsdp_precision and cpu_offload are FSDP's options, so\n"
        'they need strategy = "fsdp", and FSDP2 shards contiguous parameters only, so it\n'
        "does not take channels_last.",
        "train Net on data:\n    eval_every_steps = 100",
        "Add the field it needs (validate_on = ...), or remove this one.",
    ),
    Code(
        "S131",
        "bad-override",
        "semantic",
        "a --set override names no field of the program",
        "`aurane run FILE --set NAME=VALUE` sets a field of a train, train_gan, dataset or\n"
        "experiment block before the program is checked: NAME is a field (lr, batch, seed:\n"
        "the jobs' field, their training datasets' field, the experiment's) or BLOCK.FIELD\n"
        "(a dataset, the experiment, or a trained model's job: shapes_val.batch,\n"
        "experiment.seed, ShapeNet.lr); VALUE is one Aurane value such as 3e-4, true,\n"
        '"./ck" or adamw(lr=1e-3).',
        "aurane run quickstart.aur --set lrr=3e-4",
        "Name a field the program's blocks take; qualify it with the block when it is ambiguous.",
    ),
    Code(
        "S150",
        "input-keys",
        "semantic",
        "input_shape/input_dtype do not match the forward's inputs",
        "A model whose forward takes several inputs keys input_shape and input_dtype by\n"
        "the forward's parameter names: every input has a shape, and each key names an\n"
        "input (a missing input_dtype key is float32). A one-input model writes a tuple.",
        "model M:\n    input_shape = {ids: (8,), mask: (8,)}\n    def forward(ids, msk=ones):\n"
        "        return ids",
        "Key each entry by a forward parameter, one entry per input.",
    ),
    Code(
        "S151",
        "block-input-count",
        "semantic",
        "a block call passes too few or too many tensors",
        "A block whose forward takes several inputs is called with one tensor per input,\n"
        "in order; the inputs with a default may be left out.",
        "h = Encoder(x)  # def forward(x, mask):",
        "Pass each required input (the message names the missing one).",
    ),
    Code(
        "S152",
        "output-count",
        "semantic",
        "the names bound to a block's outputs do not match its return",
        "`h, pooled = Encoder(x)` binds one name per output of the block's `return h,\n"
        "pooled`; a block with several outputs cannot be a step of a chain or one value.",
        "a, b, c = Encoder(x)  # return h, pooled",
        "Bind exactly as many names as the block returns.",
    ),
    Code(
        "S153",
        "several-inputs-not-yet",
        "semantic",
        "a command or job does not handle several model inputs yet",
        "Models with several inputs or outputs check, compile, profile, train (`train`)\n"
        "and run in Python; GAN training (`train_gan`) of them is not supported yet.",
        "train_gan Generator and Critic on images:  # def forward(noise, label)",
        "Train the generator in your own Python code for now.",
    ),
    Code(
        "S154",
        "default-size-unknown",
        "semantic",
        "an optional input has a symbolic size that no required input has",
        "A default (`mask=ones`) is built when the caller leaves the input out, at the\n"
        "shape the IR has for it; each symbolic size of that shape (`seq`) is read from an\n"
        "input the caller passes, so some required input must have it.",
        "model M:\n    input_shape = {x: (4,), mask: (seq,)}\n    def forward(x, mask=ones):",
        "Give a required input that size, make the input required, or use a number.",
    ),
    Code(
        "S155",
        "unused-input",
        "semantic",
        "an input of a model with several is never used",
        "Each input of `def forward(ids, mask):` is a tensor the caller passes; one the\n"
        "forward never reads nor returns is probably a mistake (a mask that never reaches\n"
        "the attention).",
        "def forward(x, mask):\n    return dense(x, 4)",
        "Use the input, or remove it from the forward and its input_shape entry.",
        "warning",
    ),
    # data to several inputs (issue 23 item 4)
    Code(
        "S190",
        "unknown-output",
        "semantic",
        "a train block's output names no output of its model",
        "`output = NAME` says which output of a model with several (`return logits,\n"
        "pooled`) the loss and the metrics read; NAME is one of the return statement's names.",
        "train Net on data:\n    output = logit  # return logits, pooled",
        "Name one of the outputs the model's return statement lists.",
    ),
    Code(
        "S191",
        "output-not-named",
        "semantic",
        "a trained model returns several outputs and the train block does not say which",
        "A loss reads one tensor; a model that returns several (`return logits, pooled`)\n"
        "is trained on the one its train block names with `output = NAME`.",
        "train Net on data:  # return logits, pooled\n    loss = cross_entropy",
        "Add output = NAME (one of the return statement's names) to the train block.",
    ),
    Code(
        "S192",
        "bad-feed",
        "semantic",
        "a train block's inputs or target do not fit the model's inputs",
        "`inputs = {ids: input_ids}` maps the model's forward inputs to fields of the data;\n"
        "each key is an input of the forward, each once, and the target is no input's field.",
        "train Net on data:  # def forward(ids, mask=ones)\n    inputs = {tokens: input_ids}",
        "Key inputs by the forward's parameter names.",
    ),
    Code(
        "S113",
        "blocks-nested-too-deeply",
        "semantic",
        "blocks are nested too deeply",
        "A model may call a block that calls a block, and so on, at most 32 levels deep\n"
        "(docs/limits.md): lowering, code generation and the tools walk the levels. Real\n"
        "models nest a few. The error points at the call where the chain passes the limit.",
        "model B33:\n    def forward(x):\n        x -> B32()",
        "Call the inner blocks one after another instead of inside each other.",
    ),
    Code(
        "S120",
        "condition-not-constant",
        "semantic",
        "an `if` condition is not known at compile time",
        "An `if` in a forward body chooses which layers the model has, so it is decided when\n"
        "the program compiles: its condition reads constants, block parameters, loop\n"
        "variables and the input's sizes (`x.shape[1]`), never a tensor's values. The error\n"
        "says which tensor (or symbolic size) the condition read.",
        "model B(n):\n    def forward(x):\n        if x:\n            x -> relu()\n"
        "        return x",
        "Test a constant or parameter (`if n > 1:`); data-dependent paths are not layers.",
    ),
    Code(
        "S121",
        "loop-not-constant",
        "semantic",
        "a `for` loop does not run over a constant",
        "A `for` loop is unrolled at compile time: it runs over `range(...)`, a list or tuple\n"
        "constant or parameter, `enumerate(...)` or `zip(...)` of those. A tensor, a number\n"
        "or anything else that is not a constant sequence cannot be unrolled.",
        "model B(n):\n    def forward(x):\n        for i in x:\n            x -> relu()\n"
        "        return x",
        "Loop over range(n) or a list constant such as [64, 128, 256].",
    ),
    Code(
        "S122",
        "loop-unpacking",
        "semantic",
        "loop variables do not match the items",
        "`for a, b in LIST` unpacks each item into as many names as it has values; an item\n"
        "with another count (or a number where a tuple is expected) cannot be unpacked.\n"
        "The error names the iteration and the item.",
        "model B:\n    def forward(x):\n        for a, b in [(1, 2), (3,)]:\n"
        "            x -> dense(a)\n        return x",
        "Make every item a tuple of the same length, or change the loop variables.",
    ),
    Code(
        "S123",
        "unroll-limit",
        "semantic",
        "unrolling makes too many statements",
        "Loops are unrolled when the program compiles. A loop may run at most 10,000 times\n"
        "and one forward body may unroll into at most 20,000 statements (docs/limits.md),\n"
        "so that a mistaken bound is refused instead of filling memory.",
        "model B:\n    def forward(x):\n        for i in range(100000):\n"
        "            x -> relu()\n        return x",
        "Use a smaller bound, or repeat(Block, n) for many copies of one block.",
    ),
    Code(
        "S124",
        "layer-name-template",
        "semantic",
        "a layer name template gives an invalid or repeated name",
        "`as layer{i + 1}` fills each `{...}` with a constant (an integer or a string) in\n"
        "each iteration. A template that gives the same name in two iterations is an error\n"
        "naming both; so is a value that is no valid name part (a float, or a string with\n"
        "characters other than letters, digits, '_' and '-').",
        "model B:\n    def forward(x):\n        for i in range(2):\n"
        "            x -> dense(8) as fc{i // 2}\n        return x",
        "Make the template depend on every loop variable that changes (`fc{i}`).",
    ),
    Code(
        "S125",
        "not-an-operation",
        "semantic",
        "a value is used as an operation, or an operation as a value",
        "An operation-valued constant or parameter (`act = relu`, `block = Bottleneck`)\n"
        "is applied as a step `-> act()`, a suffix `.act` or a call `block(64)`; `none`\n"
        "applies nothing. Calling a constant that holds a number, or using an operation\n"
        "where a number or tensor is expected, is an error.",
        "model B(act = 3):\n    def forward(x):\n        x -> act()\n        return x",
        "Give an operation or model name (`act = gelu`), or `none` to skip the step.",
    ),
    Code(
        "S126",
        "input-size",
        "semantic",
        "an input size cannot be read here",
        "`x.shape[k]` is a constant inside a model: the size of axis k of the forward's\n"
        "input (k counts the batch axis as 0, negatives count from the end), known for each\n"
        "call. The batch axis is not known at compile time, an index must lie inside the\n"
        "input's rank, and only the forward's own input has known sizes before lowering.",
        "model B:\n    def forward(x):\n        x -> dense(x.shape[0])\n        return x",
        "Read a sample axis of the forward input, e.g. x.shape[1] for the channels.",
    ),
    Code(
        "S127",
        "bad-initialiser",
        "semantic",
        "an initialiser or init rule is invalid",
        "`init=` on a parametric operation, and `init TARGET: SPEC` lines in a model, take\n"
        "one of normal(std), trunc_normal(std), uniform(a, b), zeros, ones, constant(v),\n"
        "xavier_uniform, xavier_normal, kaiming_uniform and kaiming_normal (mode,\n"
        "nonlinearity), with numeric arguments. A rule's target is an operation name\n"
        "(optionally .weight or .bias) or a parameter name pattern; a target that matches\n"
        "no parameter of the model is an error.",
        "model N:\n    input_shape = (4,)\n    def forward(x):\n"
        "        x -> dense(2, init=gaussian(1))",
        "Use one of the initialisers listed, e.g. init=normal(0.02).",
    ),
    Code(
        "S128",
        "bad-variant",
        "semantic",
        "a model variant is invalid",
        "`model NAME = Block(args):` defines a model whose layers and forward are exactly\n"
        "the block's, called with those arguments: it has no forward of its own, the base\n"
        "must be a model of the program, and a variant cannot itself take parameters.",
        "model v = B(2):\n    def forward(x):\n        return x",
        "Remove the forward, or write an ordinary model that calls the block.",
    ),
    Code(
        "S129",
        "bad-splice",
        "semantic",
        "a spliced call cannot be spliced",
        "`-> *Block(...) as features` puts the block's layers into the container\n"
        "`features` (each unnamed layer at the next index, as torchvision's flat\n"
        "nn.Sequential). Only a block call can be spliced, and it needs the container's\n"
        "name after `as`.",
        "model N:\n    input_shape = (4,)\n    def forward(x):\n        x -> *dense(2) as features",
        "Splice a block call, and name the container it goes into.",
    ),
    Code(
        "T114",
        "size-must-be-concrete",
        "type",
        "an operation needs a concrete size where a symbolic one reaches it",
        "Symbolic sizes (`seq = dim(...)`) flow through shape inference as formulas, but\n"
        "some rules need a number: a layer whose parameters depend on the size (dense over a\n"
        "symbolic feature axis), or a check that holds for only part of the declared range.",
        "seq = dim(1, 64)\nmodel M:\n    input_shape = (8, seq)\n"
        "    def forward(x):\n        x -> dense(4)",
        "Make that axis concrete, move the symbolic axis elsewhere, or narrow dim(min, max).",
    ),
    Code(
        "T115",
        "budget-exceeded",
        "type",
        "a model exceeds its budget",
        "A `budget` line in a model states limits on parameters, MACs (or FLOPs) per sample\n"
        "and activation memory at a batch size; the compiler's figures exceed one of them.\n"
        "The message gives the actual figure and the layers that contribute most.",
        "model M:\n    budget params <= 1K\n    input_shape = (64,)\n"
        "    def forward(x):\n        x -> dense(64)",
        "Shrink the largest contributors, or raise the budget if it was set too low.",
    ),
    Code(
        "T116",
        "repeat-count-too-large",
        "type",
        "a repeat count is over the limit",
        "`repeat(Block, n)` may repeat a block at most 10,000 times (docs/limits.md): every\n"
        "tool that expands a repeat (visualize --expand, verify, profile, the playground, the\n"
        "generated module) does work per copy, so the count is checked before anything expands.",
        "model M:\n    input_shape = (8,)\n    def forward(x):\n"
        "        x -> repeat(Block, 1000000)",
        "Repeat the block fewer times.",
    ),
    Code(
        "T117",
        "expansion-too-large",
        "type",
        "a model expands to too many operations",
        "The operations of a model with every repeat and block call expanded (a block called\n"
        "twice counts twice, a repeat of n counts n times) may be at most 20,000\n"
        "(docs/limits.md). The count is computed on the compact graph before anything expands;\n"
        "the error points at the call that takes the model over the limit.",
        "model M:\n    input_shape = (8,)\n    def forward(x):\n"
        "        x -> repeat(Block, 9000) -> repeat(Block, 9000) -> repeat(Block, 9000)",
        "Repeat fewer times or nest fewer blocks.",
    ),
    Code(
        "T118",
        "data-file",
        "type",
        "a data file that does not have what its dataset block names",
        "check reads the headers of the data files a dataset names (a CSV's first line, a\n"
        "Parquet file's footer, a token file's JSON sidecar) and nothing else; a column that\n"
        "is not there, a non-numeric column, or a file that cannot be read is reported at\n"
        "the field that names it. A file that does not exist yet is left to the program's\n"
        "first-batch check.",
        'dataset d:\n    from aurane.data.Table\n    path = "rows.csv"\n    inputs = ["x1"]\n'
        '    target = "lable"',
        "Name a column the file has (the message lists them), or fix the file.",
    ),
    Code(
        "T130",
        "input-dtype",
        "type",
        "a tensor passed to a block input has another dtype than the block declares",
        "A block that declares input_dtype for its inputs is called with tensors of those\n"
        "dtypes; the message says which input and where its value came from.",
        "h = Encoder(x, mask)  # input_dtype = {x: float32, mask: bool}, mask is int64",
        "Cast the value (to(bool)) or change the block's input_dtype.",
    ),
    Code(
        "T150",
        "input-not-fed",
        "type",
        "a model input that no field of the training data feeds",
        "Samples with several fields (dicts, as Hugging Face datasets yields, or tuples)\n"
        "feed the model's inputs by name, by position, or as the train block's\n"
        "`inputs = {input: field}` says; a required input (one without a default) needs a\n"
        "field, and a field the train block names must exist.",
        "train Net on reviews:  # def forward(ids, mask); fields input_ids, attention_mask, label",
        "Map the input to a field with inputs = {ids: input_ids}, or give it a default.",
    ),
    Code(
        "T151",
        "field-not-used",
        "type",
        "a field of the training data that feeds no model input and is not the target",
        "Every field of a sample is an input of the model or the target; a field left over\n"
        "is probably an input the model forgot (an attention mask) or a misnamed target.",
        "train Net on reviews:  # def forward(input_ids); fields input_ids, attention_mask, label",
        "Add the input to the forward, map it with inputs = {...}, or name it the target.",
    ),
    # masks, index arithmetic and buffers (issue 23)
    Code(
        "T119",
        "mask-shape",
        "type",
        "an attention mask that does not broadcast to (batch, heads, query, key)",
        "scaled_dot_product_attention and multihead_attention take attn_mask= (and\n"
        "multihead_attention key_padding_mask=), a tensor of the body. Like every value it\n"
        "carries the batch axis first; after it the mask has one axis per (heads, query,\n"
        "key) axis (key_padding_mask: one, the key axis), each of the attention's size or 1.\n"
        "A (key,) padding mask is therefore unsqueezed to (1, 1, key) for attn_mask.",
        "keep = ne(ids, 0)   # (seq,)\ny = scaled_dot_product_attention(q, k, v, attn_mask=keep)",
        "Unsqueeze the mask to (heads or 1, query or 1, key or 1).",
    ),
    Code(
        "T120",
        "mask-dtype",
        "type",
        "an attention mask that is neither bool nor the query's float dtype",
        "A bool mask selects positions (scaled_dot_product_attention: true attends;\n"
        "nn.MultiheadAttention: true hides); a float mask of the query's dtype is added to\n"
        "the attention scores. Integer masks (token ids, 0/1 counts) are refused: torch would\n"
        "reject or misread them.",
        "y = scaled_dot_product_attention(q, k, v, attn_mask=ids)   # ids is int64",
        "Compare to get a bool mask (ne(ids, 0)) or cast it with to(m, dtype=...).",
    ),
    Code(
        "T121",
        "index-dtype",
        "type",
        "an index that is not an integer tensor",
        "gather, take_along_dim, index_select and lookup read positions from an int64 or\n"
        "int32 tensor of the body.",
        "y = gather(x, 1, index=scores)   # scores is float32",
        'Build positions with arange / cumsum, or cast with to(i, dtype="int64").',
    ),
    Code(
        "T122",
        "index-shape",
        "type",
        "an index tensor whose shape does not fit the indexed input",
        "torch.gather needs an index of the input's rank with sizes no larger than the\n"
        "input's off the gathered axis; take_along_dim the same rank (other axes\n"
        "broadcast); index_select one axis of positions per sample.",
        "y = gather(x, 1, index=i)   # x (6,), i (2, 3)",
        "Reshape the index, or use take_along_dim to broadcast it.",
    ),
    Code(
        "T123",
        "not-a-mask",
        "type",
        "a condition or mask that is not a bool tensor",
        "where's condition, masked_fill's mask and the inputs of logical_and / logical_or /\n"
        "logical_not are bool tensors, as torch requires.",
        "y = masked_fill(x, ids, 0.0)   # ids is int64",
        'Make a mask with a comparison (ne(ids, 0)) or cast it with to(m, dtype="bool").',
    ),
    Code(
        "S132",
        "bad-buffer",
        "semantic",
        "buffer arguments that do not fit its init",
        "buffer(shape, init=...) computes its contents at construction: value= goes with\n"
        'init="full", window=(h, w) with init="relative_position_index" (shape (h*w, h*w)),\n'
        'init="arange" fills one axis, init="causal_mask" is square, init="sinusoid" is a\n'
        "(positions, even width) float table.",
        'idx = buffer((49, 48), init="relative_position_index", window=(7, 7))',
        "Use the shape the message gives, or the arguments the init takes.",
    ),
    # lint
    Code(
        "W001",
        "trailing-whitespace",
        "lint",
        "trailing whitespace",
        "Spaces or tabs at the end of a line are invisible noise in diffs. Fixable with\n"
        "'aurane lint --auto-fix' (and removed by 'aurane format').",
        "width = 32   ",
        "Delete the spaces at the end of the line.",
        "warning",
    ),
    Code(
        "W002",
        "missing-block-colon",
        "lint",
        "block header without ':'",
        "Headers of model, dataset, experiment, train, train_gan and def blocks end with ':'.\n"
        "The block still parses, so 'aurane lint --auto-fix' can add the colon safely.",
        "model Net\n    input_shape = (8,)",
        "Add ':' at the end of the header.",
        "warning",
    ),
    Code(
        "W003",
        "line-too-long",
        "lint",
        "line longer than 100 characters",
        "Long lines are hard to read and review; 'aurane format' breaks long calls and chains.",
        "x -> conv2d(16, kernel=3, stride=1, padding=1, dilation=1, groups=1, bias=false) -> ...",
        "Run 'aurane format' or split the chain over several '->' lines.",
        "warning",
    ),
    Code(
        "E001",
        "does-not-parse",
        "lint",
        "the file does not parse",
        "The parser rejected the file, so no other rule could run on that part of it.\n"
        "The message repeats the parser's diagnostic and its P code.",
        "x -> dense(4",
        "Fix the syntax error; 'aurane explain' on the P code tells more.",
    ),
    Code(
        "L101",
        "unused-constant",
        "lint",
        "constant is never used",
        "A global or model constant that nothing refers to is dead code, or a typo\n"
        "elsewhere made the intended reference miss it.",
        "hidden = 64\nmodel Net:\n    def forward(x):\n        x -> dense(32)",
        "Use the constant or delete it.",
        "warning",
    ),
    Code(
        "L102",
        "unused-value",
        "lint",
        "value computed but never used",
        "A forward-body assignment whose value is never read and is not the model's output\n"
        "costs parameters and time and changes nothing.",
        "extra = dense(x, 4)\nreturn x",
        "Use the value or delete the statement.",
        "warning",
    ),
    Code(
        "L103",
        "shadowed-constant",
        "lint",
        "model constant shadows a global constant",
        "Inside the model the model's value wins; readers may expect the global one.",
        "width = 32\nmodel Net:\n    width = 16",
        "Rename one of them if the shadowing is not intended.",
        "info",
    ),
    Code(
        "L104",
        "redundant-activation",
        "lint",
        "activation has no effect",
        "relu of a value that is already non-negative (the output of relu, sigmoid or softmax)\n"
        "returns its input unchanged.",
        "x -> dense(8).relu -> relu()",
        "Delete the redundant activation.",
        "warning",
    ),
    Code(
        "L105",
        "unused-dataset",
        "lint",
        "dataset is never used",
        "No train or train_gan job reads this dataset (as training, validation or test data).",
        "dataset extra:\n    from aurane.data.SyntheticImages",
        "Use the dataset in a job or delete it.",
        "warning",
    ),
    Code(
        "L201",
        "bias-before-batchnorm",
        "lint",
        "layer bias right before batch norm",
        "Batch norm subtracts the per-channel mean, so the bias of the convolution or dense\n"
        "layer feeding it is cancelled: parameters that are trained but do nothing.",
        "x -> conv2d(16, kernel=3) -> batchnorm()",
        "Pass bias=false to the layer before the batch norm.",
        "warning",
    ),
    Code(
        "L202",
        "dropout-before-output",
        "lint",
        "dropout is the model's last operation",
        "Dropout on the output randomly zeroes predictions (logits) during training; it\n"
        "belongs between hidden layers.",
        "x -> dense(10) -> dropout(0.5)",
        "Move the dropout before the last layer or delete it.",
        "warning",
    ),
    Code(
        "L203",
        "softmax-into-cross-entropy",
        "lint",
        "softmax output fed to cross_entropy",
        "cross_entropy applies log_softmax itself and expects logits; a softmax before it\n"
        "squashes the gradients and slows or stalls training.",
        "x -> dense(10).softmax(dim=-1)   # with loss = cross_entropy",
        "Drop the softmax (apply it at inference time) or use log_softmax with loss = nll.",
        "warning",
    ),
    Code(
        "L204",
        "sigmoid-into-bce-with-logits",
        "lint",
        "sigmoid output fed to bce_with_logits",
        "bce_with_logits applies the sigmoid itself and expects logits; a sigmoid before it\n"
        "applies it twice.",
        "x -> dense(1).sigmoid   # with loss = bce_with_logits",
        "Drop the sigmoid, or keep it and use loss = bce.",
        "warning",
    ),
    Code(
        "L205",
        "batchnorm-batch-one",
        "lint",
        "batch norm trained with batch = 1",
        "Batch statistics of a single sample are meaningless; for (batch, features) inputs\n"
        "PyTorch refuses to train at all ('Expected more than 1 value per channel').",
        "dataset d:\n    batch = 1   # and a model with batchnorm()",
        "Use a larger batch, or layer_norm instead of batchnorm.",
        "warning",
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
) -> Diagnostic:
    """Build a diagnostic whose stage and severity come from the code table."""
    entry = CODES[code]
    return Diagnostic(
        code=code,
        stage=entry.stage,
        severity=entry.severity,
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
