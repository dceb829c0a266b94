"""``aurane lsp``: a Language Server over stdio on the incremental front end.

``server`` wires the protocol (pygls); ``document`` holds one open file's analysis and
symbol index; ``features`` answers each request from them. Nothing here raises into the
protocol: a failing handler is logged and answered with an empty result.
"""
