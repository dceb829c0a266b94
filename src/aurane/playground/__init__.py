"""``aurane playground``: a local web page that analyses a program as you type.

``server.make_server`` serves the page (bundled in ``static/`` from ``web/playground`` by
``npm --prefix web/playground run build``) and one JSON endpoint, ``analyze.analyze``.
"""

from __future__ import annotations
