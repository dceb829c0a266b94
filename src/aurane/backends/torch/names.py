"""Namespace allocator: every identifier in generated code comes from here (K-INJ).

A ``Namespace`` maps source names (any string the front end accepted) to Python
identifiers that are

- ASCII-only, so two names Python would treat as one after NFKC normalization
  (``ﬁle`` and ``file``) can never meet, and no bidi or look-alike text reaches code;
- never a keyword, soft keyword, builtin, dunder or a name the template relies on
  (``torch``, ``nn``, ``F``, ``self``, ``forward``, ...);
- injective: distinct source names get distinct identifiers (a table, not a hash);
- deterministic: the result depends only on the order of requests, never on hashing.

A faithful name (already safe) keeps its spelling when ``allocate_all`` sees it, even if
an unsafe name requested alongside it would have been renamed onto it.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Fixed lists instead of ``keyword.kwlist`` / ``dir(builtins)``: output must be byte-identical
# across Python versions, so the set of renamed names cannot depend on the interpreter.
KEYWORDS = _words(
    "False None True and as assert async await break class continue def del elif else "
    "except finally for from global if import in is lambda nonlocal not or pass raise "
    "return try while with yield"
)
SOFT_KEYWORDS = frozenset({"_", "case", "match", "type"})
BUILTINS = _words(
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
        "os",
        "sys",
        "self",
        "super",
        "forward",
        "padding_mask",
        "self_attention",
        "rotary_embedding",
        "DropPath",
        "LayerNorm2d",
        "TransposedLinear",
        "block",
        "aurane",
        "torchvision",
    }
)
# Attributes of nn.Module (methods and state): a layer named like one would break the module.
MODULE_ATTRIBUTES = _words(
    "T_destination add_module apply bfloat16 buffers call_super_init children compile cpu "
    "cuda double dump_patches eval extra_repr float forward get_buffer get_extra_state "
    "get_parameter get_submodule half ipu load_state_dict modules mtia named_buffers "
    "named_children named_modules named_parameters parameters register_backward_hook "
    "register_buffer register_forward_hook register_forward_pre_hook "
    "register_full_backward_hook register_full_backward_pre_hook "
    "register_load_state_dict_post_hook register_load_state_dict_pre_hook register_module "
    "register_parameter register_state_dict_post_hook register_state_dict_pre_hook "
    "requires_grad_ set_extra_state set_submodule share_memory state_dict to to_empty "
    "train training type xpu zero_grad"
)
RESERVED = KEYWORDS | SOFT_KEYWORDS | BUILTINS | TEMPLATE


def ascii_identifier(name: str, *, private_ok: bool = True) -> str:
    """A readable ASCII identifier for ``name`` (not yet checked against reserved names).

    NFKC first (what Python itself does to identifiers), then accents dropped; any other
    non-ASCII character becomes ``u<hex>``. Leading double underscores (dunders, and names
    Python would mangle inside a class) are stripped and marked with a trailing ``_``.
    """
    text = unicodedata.normalize("NFKC", name)
    if not text.isascii():
        text = "".join(
            ch for ch in unicodedata.normalize("NFKD", text) if not unicodedata.combining(ch)
        )
    text = "".join(ch if _word_char(ch) else f"u{ord(ch):04x}" for ch in text)
    if not text:
        return "v"
    if text[0].isdigit():
        text = "v" + text
    if text.startswith("__") or (text.startswith("_") and not private_ok):
        text = (text.strip("_") or "v") + "_"
    return text


def _word_char(ch: str) -> bool:
    return ch.isascii() and (ch.isalnum() or ch == "_")


class Namespace:
    """One scope of generated identifiers (module globals, a class's attributes, a forward)."""

    def __init__(self, reserved: Iterable[str] = RESERVED, *, private_ok: bool = True) -> None:
        self.reserved = frozenset(reserved)
        self.private_ok = private_ok
        self.names: dict[str, str] = {}
        self.used: set[str] = set()

    def candidate(self, name: str) -> str:
        text = ascii_identifier(name, private_ok=self.private_ok)
        return text + "_" if text in self.reserved else text

    def is_faithful(self, name: str) -> bool:
        """True when ``name`` can appear in the output unchanged."""
        return self.candidate(name) == name

    def allocate(self, name: str) -> str:
        """The identifier for ``name``: the same on every call, distinct for distinct names."""
        found = self.names.get(name)
        if found is None:
            found = self.names[name] = self.fresh(self.candidate(name))
        return found

    def allocate_all(self, names: Iterable[str]) -> None:
        """Allocate many names, faithful ones first so a renamed one never takes their place."""
        ordered = list(dict.fromkeys(names))
        for name in ordered:
            if self.is_faithful(name):
                self.allocate(name)
        for name in ordered:
            self.allocate(name)

    def fresh(self, stem: str) -> str:
        """A never-used identifier based on a safe ``stem``: ``stem``, ``stem_2``, ``stem_3``..."""
        base = self.candidate(stem)
        text, count = base, 1
        while text in self.used or text in self.reserved:
            count += 1
            text = f"{base}_{count}"
        self.used.add(text)
        return text

    def claim(self, names: Iterable[str]) -> None:
        """Mark identifiers defined outside this allocator (imports, job functions) as taken."""
        self.used.update(names)
