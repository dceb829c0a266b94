"""Python that generated programs carry: helper classes and functions copied, as text, into
the files that use them (``backends/torch/inline.py`` reads them; generated programs never
import aurane).

These modules import torch at the top, so the compiler never imports them: it reads their
source. They are ordinary, typed, linted package code, tested on their own
(``tests/backends/torch/test_inlined.py``); the copy drops the annotations, as the rest of
the generated code has none.
"""
