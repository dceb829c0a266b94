"""One open document: its text, its incremental analysis and a symbol index over its AST."""

from __future__ import annotations

from collections.abc import Iterator

from aurane.frontend import FrontEnd
from aurane.incremental import IncrementalFrontEnd
from aurane.ir.graph import Graph, Node
from aurane.lsp.positions import LineIndex, contains, size
from aurane.records import field, record
from aurane.semantics import config
from aurane.source import Span, split_lines
from aurane.syntax import ast

GLOBAL = "global"
LOCAL = "local"


@record(frozen=True)
class Occurrence:
    """A name in the text: a definition or a use of a model, block, constant, dataset or value."""

    key: tuple[str, ...]  # ("global", name) or ("local", model, name)
    name: str
    span: Span  # the name only
    definition: bool
    kind: str  # model, block, constant, dataset, value, parameter


@record
class SymbolIndex:
    occurrences: list[Occurrence] = field(default_factory=list)
    kinds: dict[str, str] = field(default_factory=dict)  # global name -> kind
    statements: dict[str, ast.Statement] = field(default_factory=dict)  # global name -> def

    def at(self, line: int, column: int) -> Occurrence | None:
        best: Occurrence | None = None
        for item in self.occurrences:
            if contains(item.span, line, column) and (
                best is None or size(item.span) < size(best.span)
            ):
                best = item
        return best

    def all(self, key: tuple[str, ...]) -> list[Occurrence]:
        return [o for o in self.occurrences if o.key == key]

    def definitions(self, key: tuple[str, ...]) -> list[Occurrence]:
        return [o for o in self.occurrences if o.key == key and o.definition]


def _first_part(name: ast.Name) -> tuple[str, Span]:
    first = name.id.split(".", 1)[0]
    span = name.span
    return first, Span(span.line, span.column, span.line, span.column + len(first))


def build_index(program: ast.AuraneProgram) -> SymbolIndex:
    index = SymbolIndex()
    for stmt in program.statements:
        if isinstance(stmt, ast.Model):
            shaped = any(f.name == "input_shape" for f in stmt.fields)
            kind = "model" if shaped and not stmt.params else "block"
            index.kinds.setdefault(stmt.name, kind)
            index.statements.setdefault(stmt.name, stmt)
        elif isinstance(stmt, ast.Constant | ast.Dataset):
            kind = "constant" if isinstance(stmt, ast.Constant) else "dataset"
            index.kinds.setdefault(stmt.name, kind)
            index.statements.setdefault(stmt.name, stmt)
    for stmt in program.statements:
        _Walker(index, stmt).run()
    return index


class _Walker:
    def __init__(self, index: SymbolIndex, stmt: ast.Statement) -> None:
        self.index = index
        self.stmt = stmt
        self.model: str | None = stmt.name if isinstance(stmt, ast.Model) else None
        self.locals: set[str] = set()

    def add(self, key: tuple[str, ...], name: str, span: Span, definition: bool, kind: str) -> None:
        self.index.occurrences.append(Occurrence(key, name, span, definition, kind))

    def global_def(self, name: str, span: Span) -> None:
        self.add((GLOBAL, name), name, span, True, self.index.kinds.get(name, "constant"))

    def local_def(self, name: str, span: Span, kind: str = "value") -> None:
        assert self.model is not None
        self.locals.add(name)
        self.add((LOCAL, self.model, name), name, span, True, kind)

    def use(self, name: str, span: Span) -> None:
        if self.model is not None and name in self.locals:
            self.add((LOCAL, self.model, name), name, span, False, "value")
        elif name in self.index.kinds:
            self.add((GLOBAL, name), name, span, False, self.index.kinds[name])

    def run(self) -> None:
        stmt = self.stmt
        match stmt:
            case ast.Constant():
                self.global_def(stmt.name, stmt.name_span)
                self.expr(stmt.value)
            case ast.Dataset():
                self.global_def(stmt.name, stmt.name_span)
                self.fields(stmt.fields)
            case ast.Experiment():
                self.fields(stmt.fields)
            case ast.Train():
                self.expr(stmt.model)
                self.expr(stmt.dataset)
                self.fields(stmt.fields)
            case ast.TrainGan():
                for ref in (stmt.generator, stmt.discriminator, stmt.dataset):
                    self.expr(ref)
                self.fields(stmt.fields)
            case ast.Model():
                self.global_def(stmt.name, stmt.name_span)
                for param in stmt.params:
                    if param.default is not None:
                        self.expr(param.default)
                    self.local_def(param.name, param.name_span, "parameter")
                for item in stmt.fields:
                    self.expr(item.value)
                    if item.name not in config.MODEL_TABLE:
                        self.local_def(item.name, item.name_span, "constant")
                if stmt.base is not None:
                    self.expr(stmt.base)
                for rule in stmt.inits:
                    self.expr(rule.spec)
                if stmt.forward is not None:
                    for inp in stmt.forward.inputs:
                        self.local_def(inp.name, inp.name_span)
                    for body in stmt.forward.body:
                        self.forward(body)

    def fields(self, fields: tuple[ast.Field, ...]) -> None:
        for item in fields:
            self.expr(item.value)

    def forward(self, stmt: ast.ForwardStmt) -> None:
        match stmt:
            case ast.If():
                for branch in stmt.branches:
                    self.expr(branch.test)
                    for inner in branch.body:
                        self.forward(inner)
            case ast.For():
                self.expr(stmt.iterable)
                for name, span in stmt.target.names():
                    self.local_def(name, span, "loop variable")
                for inner in stmt.body:
                    self.forward(inner)
            case ast.Assign():
                self.expr(stmt.value)
                for name, span in stmt.targets or ((stmt.target, stmt.target_span),):
                    self.local_def(name, span)
            case ast.ChainStmt():
                self.expr(stmt.chain)
            case ast.Return():
                self.expr(stmt.value)

    def expr(self, expr: ast.Expr | None) -> None:
        match expr:
            case ast.Name():
                name, span = _first_part(expr)
                self.use(name, span)
            case ast.TupleExpr() | ast.ListExpr():
                for item in expr.items:
                    self.expr(item)
            case ast.DictExpr():
                for item in expr.values:
                    self.expr(item)
            case ast.Call():
                if expr.func in self.index.kinds or expr.func in self.locals:
                    self.use(expr.func, expr.func_span)
                for arg in (*expr.args, *expr.layer_holes):
                    self.expr(arg)
                for keyword in expr.keywords:
                    self.expr(keyword.value)
                for suffix in expr.suffixes:
                    for arg in suffix.args:
                        self.expr(arg)
                    for keyword in suffix.keywords:
                        self.expr(keyword.value)
            case ast.BinOp() | ast.Compare() | ast.BoolOp():
                self.expr(expr.left)
                self.expr(expr.right)
            case ast.UnaryOp() | ast.Not():
                self.expr(expr.operand)
            case ast.IfExp():
                self.expr(expr.body)
                self.expr(expr.test)
                self.expr(expr.orelse)
            case ast.Subscript():
                self.expr(expr.value)
                self.expr(expr.index)
            case ast.Chain():
                self.expr(expr.source)
                for step in expr.steps:
                    self.expr(step)


def walk_graphs(graphs: dict[str, Graph]) -> Iterator[tuple[Graph, Node]]:
    """Every node of every graph, blocks' subgraphs included (each block once per call)."""
    stack = list(graphs.values())
    while stack:
        graph = stack.pop(0)
        for node in graph.nodes:
            yield graph, node
            if node.subgraph is not None:
                stack.append(node.subgraph)


class Document:
    """An open ``.aur`` file."""

    def __init__(self, uri: str, text: str, version: int | None = None) -> None:
        self.uri = uri
        self.version = version
        self.engine = IncrementalFrontEnd(uri)
        self.text = ""
        self.front: FrontEnd | None = None
        self.lines = LineIndex([])
        self._index: SymbolIndex | None = None
        self.update(text, version)

    def update(self, text: str, version: int | None = None) -> FrontEnd:
        self.text = text
        self.version = version
        self.front = self.engine.update(text)
        self.lines = LineIndex(
            self.front.source.lines if self.front.source.text == text else split_lines(text)
        )
        self._index = None
        return self.front

    @property
    def index(self) -> SymbolIndex:
        if self._index is None:
            program = self.front.program if self.front is not None else None
            self._index = build_index(program) if program is not None else SymbolIndex()
        return self._index

    @property
    def graphs(self) -> dict[str, Graph]:
        return self.front.graphs if self.front is not None else {}
