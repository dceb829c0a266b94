"""Python names the generated program reserves: one table for the front end and the backend.

``check`` refuses a ``use`` line whose module or alias would replace one of these names
(S019); the torch backend's namespace allocator (``backends/torch/names.py``) never hands
one out. Both read this module, so ``check`` reports every name ``compile`` would refuse.
Python compares identifiers after NFKC normalisation, so callers normalise first.
"""

from __future__ import annotations


def words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Fixed lists instead of ``keyword.kwlist`` / ``dir(builtins)``: output must be byte-identical
# across Python versions, so the set of renamed names cannot depend on the interpreter.
KEYWORDS = words(
    "False None True and as assert async await break class continue def del elif else "
    "except finally for from global if import in is lambda nonlocal not or pass raise "
    "return try while with yield"
)
SOFT_KEYWORDS = frozenset({"_", "case", "match", "type"})
BUILTINS = words(
    "ArithmeticError AssertionError AttributeError BaseException BaseExceptionGroup "
    "BlockingIOError BrokenPipeError BufferError BytesWarning ChildProcessError "
    "ConnectionAbortedError ConnectionError ConnectionRefusedError ConnectionResetError "
    "DeprecationWarning EOFError Ellipsis EncodingWarning EnvironmentError Exception "
    "ExceptionGroup FileExistsError FileNotFoundError FloatingPointError FutureWarning "
    "GeneratorExit IOError ImportError ImportWarning IndentationError IndexError "
    "InterruptedError IsADirectoryError KeyError KeyboardInterrupt LookupError MemoryError "
    "ModuleNotFoundError NameError NotADirectoryError NotImplemented NotImplementedError "
    "OSError OverflowError PendingDeprecationWarning PermissionError ProcessLookupError "
    "PythonFinalizationError RecursionError ReferenceError ResourceWarning RuntimeError "
    "RuntimeWarning StopAsyncIteration StopIteration SyntaxError SyntaxWarning SystemError "
    "SystemExit TabError TimeoutError TypeError UnboundLocalError UnicodeDecodeError "
    "UnicodeEncodeError UnicodeError UnicodeTranslateError UnicodeWarning UserWarning "
    "ValueError Warning ZeroDivisionError abs aiter all anext any ascii bin bool breakpoint "
    "bytearray bytes callable chr classmethod compile complex copyright credits delattr "
    "dict dir divmod enumerate eval exec exit filter float format frozenset getattr "
    "globals hasattr hash help hex id input int isinstance issubclass iter len license "
    "list locals map max memoryview min next object oct open ord pow print property quit "
    "range repr reversed round set setattr slice sorted staticmethod str sum super tuple "
    "vars zip"
)
# Names the generated template itself uses, in any scope.
TEMPLATE = frozenset(
    {
        "torch",
        "nn",
        "F",
        "math",
        "fnmatch",
        "os",
        "sys",
        "self",
        "super",
        "forward",
        "padding_mask",
        "self_attention",
        "rotary_embedding",
        "make_divisible",
        "sinusoid_table",
        "relative_position_index",
        "gather_rows",
        "DropPath",
        "LayerNorm2d",
        "TransposedLinear",
        "block",
        "aurane",
        "torchvision",
    }
)
# Module-level names the training runtime's generated code imports (besides TEMPLATE).
RUNTIME_NAMES = frozenset(
    {
        "random",
        "time",
        "hashlib",
        "np",
        "dist",
        "DataLoader",
        "DistributedSampler",
        "DistributedDataParallel",
        "rt",  # from aurane import runtime as rt
    }
)
# Names the generated program binds to something other than the module of that name
# (`from torch import nn`, `self`): an unaliased `use` of a module called so is refused.
TEMPLATE_ALIASES = frozenset(
    {"nn", "F", "self", "super", "forward", "np", "dist", "rt", "DataLoader"}
    | {"DistributedSampler", "DistributedDataParallel", "padding_mask", "self_attention"}
    | {"rotary_embedding", "block"}
)
# Every name the generated training code binds inside its functions (the locals of
# ``backends/torch/jobs.py``'s JOB_LOCALS, the parameters of the job functions and loader
# factories): a module imported under one of them with an unaliased ``use`` would be hidden
# where the dataset is built. tests/security/test_generated_names.py tries every name the
# generated training code binds as such a module: each trains or is refused here.
# (``torch`` is not one: the generated code binds it by ``import torch``, as ``use torch``.)
TRAINING_NAMES = words(
    "rt nn device loss_fn optimizer scheduler scaler amp_dtype stats run net epoch "
    "inputs targets outputs loss scores val_scores test_metrics data_check "
    "discriminator_steps generator_steps g_optimizer d_optimizer g_loss_fn d_loss_fn "
    "noise_shape sample_shape generate_samples_every noise_source fixed_noise running_loss "
    "g_net d_net sums totals batch real size noise fake real_out fake_out d_loss_real "
    "d_loss_fake frozen judged g_loss images "
    # parameters of the job functions and of the loader factories, the factories' local
    "model generator discriminator resume_from train_loader validation_loader test_loader "
    "seed dataset"
)
