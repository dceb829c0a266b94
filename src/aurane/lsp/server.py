"""The protocol side of ``aurane lsp`` (pygls): documents in, diagnostics and answers out.

Every handler runs inside ``_guard``: an exception is logged (stderr and window/logMessage,
type Error) and answered with the empty result, so one bad request never takes the server
down. Tests fail on any such log line. A request about a document that is not open is
answered with the empty result too: the server never reads a file the client names (pygls
would read it from disk, and ``file:///dev/zero`` never ends). Messages travel through
``transport`` (framing that survives wrong headers, errors for malformed requests).
"""

from __future__ import annotations

import contextlib
import logging
import sys
import traceback
from collections.abc import Callable
from typing import Any, BinaryIO, TypeVar
from urllib.parse import unquote

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer

from aurane.diagnostics import Diagnostic
from aurane.incremental import shift
from aurane.lsp import features
from aurane.lsp.document import Document
from aurane.lsp.transport import serve_stdio
from aurane.syntax.tokens import MAX_FILE_BYTES
from aurane.version import __version__

T = TypeVar("T")
log = logging.getLogger("aurane.lsp")
FAILURE_MARK = "aurane-lsp handler failed"
LINT_CACHE_CHARS = 4 * MAX_FILE_BYTES  # the block texts whose lint results are kept


class NotOpen(Exception):
    """A request names a document the client has not opened (or the server is not ready)."""


class AuraneServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(
            "aurane", __version__, text_document_sync_kind=lsp.TextDocumentSyncKind.Incremental
        )
        self.documents: dict[str, Document] = {}
        self.settings: dict[str, Any] = {"inlayHints": True, "lint": True}
        self._lint_cache: dict[str, tuple[Diagnostic, ...]] = {}
        self._lint_chars = 0

    def start_io(self, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> None:
        serve_stdio(self, stdin or sys.stdin.buffer, stdout or sys.stdout.buffer)

    def configure(self, options: Any) -> None:
        if isinstance(options, dict):
            options = options.get("aurane", options)
            if isinstance(options, dict):
                for key in ("inlayHints", "lint"):
                    if key in options:
                        self.settings[key] = bool(options[key])

    def analyse(self, uri: str, text: str, version: int | None = None) -> list[lsp.Diagnostic]:
        """Re-analyse one document and return its diagnostics (what is published)."""
        doc = self.documents.get(uri)
        if doc is None:
            doc = self.documents[uri] = Document(uri, text, version)
        else:
            doc.update(text, version)
        extra = []
        if self.settings["lint"] and not _too_big(text):  # too big: the P011 error alone
            extra = self._lint_lines(doc, text)
        return features.diagnostics(doc, extra)

    def _lint_lines(self, doc: Document, text: str) -> list[Diagnostic]:
        """The line-level lint rules (W001, W003), per block, each block's text linted once."""
        from aurane.tools.lint import text_rules

        blocks = doc.engine.blocks
        if not blocks:
            return text_rules(text)
        out: list[Diagnostic] = []
        for block in blocks:
            found = self._lint_cache.get(block.text)
            if found is None:
                if len(self._lint_cache) > 20000 or self._lint_chars > LINT_CACHE_CHARS:
                    self._lint_cache.clear()
                    self._lint_chars = 0
                found = self._lint_cache[block.text] = tuple(text_rules(block.text))
                self._lint_chars += len(block.text)
            if found:
                out += shift(found, block.start - 1)
        return out

    def publish(self, uri: str, text: str, version: int | None = None) -> None:
        found = self.analyse(uri, text, version)
        self.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri, found, version))

    def document(self, uri: str) -> Document:
        """The open document ``uri``, analysed; ``NotOpen`` for any other."""
        try:
            opened = self.workspace.text_documents.get(unquote(uri))
        except RuntimeError:  # no workspace before ``initialize``
            opened = None
        if opened is None:
            raise NotOpen(uri)
        doc = self.documents.get(uri)
        text = opened.source
        if doc is None or doc.text != text:
            self.analyse(uri, text)
            doc = self.documents[uri]
        return doc

    def failed(self, what: str, error: BaseException) -> None:
        detail = "".join(traceback.format_exception(type(error), error, error.__traceback__))
        message = f"{FAILURE_MARK}: {what}: {error!r}\n{detail}"
        print(message, file=sys.stderr, flush=True)
        with contextlib.suppress(Exception):  # the client may be gone; stderr has it
            self.window_log_message(lsp.LogMessageParams(lsp.MessageType.Error, message))


def _too_big(text: str) -> bool:
    return len(text) * 4 > MAX_FILE_BYTES and len(text.encode("utf-8", "surrogatepass")) > (
        MAX_FILE_BYTES
    )


def _guard(server: AuraneServer, what: str, empty: T, run: Callable[[], T]) -> T:
    try:
        return run()
    except NotOpen:
        return empty
    except Exception as error:
        server.failed(what, error)
        return empty


def create_server() -> AuraneServer:
    server = AuraneServer()

    def point(uri: str, position: lsp.Position) -> tuple[Document, int, int]:
        doc = server.document(uri)
        line, column = doc.lines.point(position)
        return doc, line, column

    def at_point(what: str, empty: T, params: Any, feature: Callable[..., T], *extra: Any) -> T:
        """``feature`` at the request's document position (and ``extra``), guarded."""
        where = params.text_document.uri, params.position
        return _guard(server, what, empty, lambda: feature(*point(*where), *extra))

    def on_document(what: str, params: Any, feature: Callable[[Document], list[T]]) -> list[T]:
        """``feature`` of the request's whole document, guarded (empty on failure)."""
        return _guard(server, what, [], lambda: feature(server.document(params.text_document.uri)))

    @server.feature(lsp.INITIALIZE)
    def initialize(params: lsp.InitializeParams) -> None:
        _guard(server, "initialize", None, lambda: server.configure(params.initialization_options))

    @server.feature(lsp.WORKSPACE_DID_CHANGE_CONFIGURATION)
    def did_change_configuration(params: lsp.DidChangeConfigurationParams) -> None:
        _guard(server, "configuration", None, lambda: server.configure(params.settings))

    @server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
    def did_open(params: lsp.DidOpenTextDocumentParams) -> None:
        item = params.text_document
        _guard(server, "didOpen", None, lambda: server.publish(item.uri, item.text, item.version))

    @server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(params: lsp.DidChangeTextDocumentParams) -> None:
        uri = params.text_document.uri

        def run() -> None:
            opened = server.workspace.text_documents.get(unquote(uri))
            if opened is not None:
                server.publish(uri, opened.source, params.text_document.version)

        _guard(server, "didChange", None, run)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(params: lsp.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri

        def run() -> None:
            server.documents.pop(uri, None)
            server.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri, []))

        _guard(server, "didClose", None, run)

    @server.feature(lsp.TEXT_DOCUMENT_HOVER)
    def hover(params: lsp.HoverParams) -> lsp.Hover | None:
        return at_point("hover", None, params, features.hover)

    @server.feature(lsp.TEXT_DOCUMENT_INLAY_HINT)
    def inlay_hint(params: lsp.InlayHintParams) -> list[lsp.InlayHint]:
        def run() -> list[lsp.InlayHint]:
            if not server.settings["inlayHints"]:
                return []
            doc = server.document(params.text_document.uri)
            r = params.range
            return features.inlay_hints(doc, r.start.line + 1, r.end.line + 1)

        return _guard(server, "inlayHint", [], run)

    @server.feature(lsp.TEXT_DOCUMENT_DEFINITION)
    def definition(params: lsp.DefinitionParams) -> list[lsp.Location]:
        return at_point("definition", [], params, features.definition)

    @server.feature(lsp.TEXT_DOCUMENT_REFERENCES)
    def references(params: lsp.ReferenceParams) -> list[lsp.Location]:
        include = params.context.include_declaration
        return at_point("references", [], params, features.references, include)

    @server.feature(lsp.TEXT_DOCUMENT_PREPARE_RENAME)
    def prepare_rename(params: lsp.PrepareRenameParams) -> lsp.Range | None:
        return at_point("prepareRename", None, params, features.prepare_rename)

    @server.feature(lsp.TEXT_DOCUMENT_RENAME)
    def rename(params: lsp.RenameParams) -> lsp.WorkspaceEdit | None:
        return at_point("rename", None, params, features.rename, params.new_name)

    @server.feature(
        lsp.TEXT_DOCUMENT_COMPLETION,
        lsp.CompletionOptions(trigger_characters=[".", ">", "(", " ", "="]),
    )
    def completion(params: lsp.CompletionParams) -> lsp.CompletionList:
        empty = lsp.CompletionList(is_incomplete=False, items=[])
        return _guard(
            server,
            "completion",
            empty,
            lambda: lsp.CompletionList(
                is_incomplete=False,
                items=features.completion(*point(params.text_document.uri, params.position)),
            ),
        )

    @server.feature(
        lsp.TEXT_DOCUMENT_SIGNATURE_HELP,
        lsp.SignatureHelpOptions(trigger_characters=["(", ","], retrigger_characters=["="]),
    )
    def signature_help(params: lsp.SignatureHelpParams) -> lsp.SignatureHelp | None:
        return at_point("signatureHelp", None, params, features.signature_help)

    @server.feature(lsp.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
    def document_symbol(params: lsp.DocumentSymbolParams) -> list[lsp.DocumentSymbol]:
        return on_document("documentSymbol", params, features.document_symbols)

    @server.feature(lsp.TEXT_DOCUMENT_FOLDING_RANGE)
    def folding_range(params: lsp.FoldingRangeParams) -> list[lsp.FoldingRange]:
        return on_document("foldingRange", params, features.folding_ranges)

    @server.feature(lsp.TEXT_DOCUMENT_FORMATTING)
    def formatting(params: lsp.DocumentFormattingParams) -> list[lsp.TextEdit]:
        return on_document("formatting", params, features.formatting)

    @server.feature(
        lsp.TEXT_DOCUMENT_CODE_ACTION,
        lsp.CodeActionOptions(
            code_action_kinds=[lsp.CodeActionKind.QuickFix, lsp.CodeActionKind.SourceFixAll]
        ),
    )
    def code_action(params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
        def run() -> list[lsp.CodeAction]:
            doc = server.document(params.text_document.uri)
            r = params.range
            return features.code_actions(doc, r.start.line + 1, r.end.line + 1)

        return _guard(server, "codeAction", [], run)

    return server


def main() -> int:
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    create_server().start_io()
    return 0
