"""The command table: each command's module and one-line summary.

``aurane --help`` lists commands from here without importing them; only the command being
run is imported, so `aurane check` does not pay for the other fourteen.
"""

from __future__ import annotations

# name -> (module that defines register(sub) and run(args), one-line summary), in help order
COMMANDS: dict[str, tuple[str, str]] = {
    "compile": ("aurane.cli.compile_cmd", "compile a program to PyTorch source"),
    "check": ("aurane.cli.check", "check a program for errors without compiling it"),
    "ir": ("aurane.cli.ir", "print the lowered IR graph"),
    "inspect": ("aurane.cli.inspect_cmd", "show the parsed program (AST)"),
    "explain": ("aurane.cli.explain", "explain a diagnostic code"),
    "profile": ("aurane.cli.profile_cmd", "estimate parameters, FLOPs and memory per layer"),
    "plan": (
        "aurane.cli.plan_cmd",
        "training memory per device for each strategy, and the largest batch that fits",
    ),
    "sweep": (
        "aurane.cli.sweep_cmd",
        "parameters, MACs and training memory over a grid of constants",
    ),
    "visualize": ("aurane.cli.visualize", "draw a model's architecture"),
    "watch": ("aurane.cli.watch_cmd", "recompile SRC into OUT whenever SRC changes"),
    "lint": (
        "aurane.cli.lint_cmd",
        "report style problems, dead code and common training mistakes",
    ),
    "format": ("aurane.cli.format_cmd", "rewrite .aur files in the canonical layout"),
    "benchmark": (
        "aurane.cli.benchmark_cmd",
        "time parsing, cold compiles and warm (cached) compiles",
    ),
    "interactive": (
        "aurane.cli.interactive_cmd",
        "enter a program statement by statement and see the generated Python",
    ),
    "clean": ("aurane.cli.clean_cmd", "remove compiler caches and Python bytecode"),
    "run": ("aurane.cli.run_cmd", "compile a program and run it"),
    "plot": ("aurane.cli.plot_cmd", "draw loss and metric curves of training runs"),
    "checkpoint": (
        "aurane.cli.checkpoint_cmd",
        "consolidate a sharded (FSDP) training checkpoint into one file",
    ),
    "init": ("aurane.cli.init_cmd", "create a starter project"),
    "verify": (
        "aurane.cli.verify_cmd",
        "check inferred shapes, dtypes and parameter counts against torch",
    ),
    "export": ("aurane.cli.export_cmd", "export models to ONNX or torch.export (.pt2)"),
    "import": (
        "aurane.cli.import_cmd",
        "lift a PyTorch module into a .aur program, checked against it",
    ),
    "diff": ("aurane.cli.diff_cmd", "compare the models of two programs or revisions"),
    "playground": ("aurane.cli.playground_cmd", "edit a program in a local web page, live"),
    "lsp": ("aurane.cli.lsp_cmd", "run the language server for editors (stdio)"),
}


def command_help(name: str) -> str:
    return COMMANDS[name][1]
