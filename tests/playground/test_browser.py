"""The playground in headless Chromium (Playwright): load, type an error, see the underline
and the message, fix it, see the shapes and the diagram update; links, hover, expand.

Needs Debian's ``chromium`` and the ``playwright`` Python package (the dev extra; CI installs
Chromium with apt in ``.ci/run``). Playwright's own browser download is never used. The test
writes its screenshot to its temporary folder; with ``AURANE_PLAYGROUND_SCREENSHOT=PATH``
also to PATH (how ``docs/playground.png`` is made).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from aurane.playground.server import PlaygroundServer

sync_api = pytest.importorskip(
    "playwright.sync_api", reason="the 'playwright' Python package is not installed"
)
CHROMIUM = next(
    (p for p in ("/usr/bin/chromium", shutil.which("chromium") or "") if p and Path(p).exists()),
    None,
)
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="Debian's chromium is not installed (apt-get install chromium)"
)
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
TIMEOUT = 20_000  # ms


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with sync_api.sync_playwright() as p:
        launched = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Any, server: PlaygroundServer) -> Iterator[Any]:
    # bypass_csp: wait_for_function evaluates strings, which the page's CSP forbids
    context = browser.new_context(viewport={"width": 1400, "height": 900}, bypass_csp=True)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.set_default_timeout(TIMEOUT)
    page.goto(server.url)
    page.wait_for_selector("#diagram-inner svg .node")
    page.wait_for_selector("#status.ok")
    yield page
    context.close()
    assert errors == []


def put_cursor(page: Any, line: int, column: int) -> None:
    """Click into the source editor, then move the caret to ``line``:``column`` (1-based)."""
    page.click("#source .cm-content")
    page.evaluate(
        """([line, column]) => {
            const view = window.aurane.source;
            const pos = view.state.doc.line(line).from + column - 1;
            view.dispatch({selection: {anchor: pos}});
            view.focus();
        }""",
        [line, column],
    )


def source_line(page: Any, line: int) -> str:
    text: str = page.evaluate(f"window.aurane.source.state.doc.line({line}).text")
    return text


def table_text(page: Any) -> str:
    text: str = page.inner_text("#layers tbody")
    return text


def test_type_an_error_fix_it_and_everything_updates(page: Any, tmp_path: Path) -> None:
    # loaded: the file's text, the layer table, the diagram and the generated code
    assert "model SmallResNet" in page.inner_text("#source")
    assert "(16, 32, 32)" in table_text(page)
    assert "class SmallResNet(nn.Module)" in page.evaluate(
        "window.aurane.generated.state.doc.toString()"
    )
    assert page.locator("#diagram-inner .node").count() == 7  # conv+relu folded into one node

    # type an error: an unknown argument on the last line
    line = 15
    assert source_line(page, line).endswith("dense(10)")
    put_cursor(page, line, len(source_line(page, line)))  # before the closing parenthesis
    page.keyboard.type(", foo=1")
    page.wait_for_selector(".cm-lintRange-error")
    page.wait_for_selector("#status.error")
    problem = page.inner_text("#problems li.error")
    assert "unknown argument 'foo'" in problem
    underlined = page.inner_text(".cm-lintRange-error")
    assert underlined == "foo"
    page.hover(".cm-lintRange-error")
    tooltip = page.wait_for_selector(".cm-tooltip-lint")
    assert tooltip is not None and "unknown argument 'foo'" in tooltip.inner_text()
    assert "fix the errors" in page.inner_text("#python-note")
    page.screenshot(path=str(tmp_path / "playground-error.png"))

    # fix it, and change the width: the shapes and the diagram follow
    for _ in range(len(", foo=1")):
        page.keyboard.press("Backspace")
    page.wait_for_selector("#status.ok")
    assert page.locator(".cm-lintRange-error").count() == 0
    put_cursor(page, line, len(source_line(page, line)))  # dense(10|)
    page.keyboard.press("Backspace")
    page.keyboard.press("Backspace")
    page.keyboard.type("7")
    page.wait_for_function(
        "document.querySelector('#diagram-inner svg').textContent.includes('dense(7)')"
    )
    assert "(7,)" in table_text(page)
    assert "nn.Linear(16, 7)" in page.evaluate("window.aurane.generated.state.doc.toString()")
    page.wait_for_selector("#status.ok")
    # for the screenshot: one block drawn open, one layer linked in every pane
    page.locator("#diagram-inner .node.block").first.dblclick()
    page.wait_for_selector("#diagram-inner .cluster")
    page.locator(
        "#diagram-inner .node", has_text="conv2d(16, kernel=3, padding=1) + relu"
    ).last.click()
    page.wait_for_selector("#python .cm-linked-line")
    shot = tmp_path / "playground.png"
    page.screenshot(path=str(shot))
    assert shot.stat().st_size > 10_000
    extra = os.environ.get("AURANE_PLAYGROUND_SCREENSHOT")
    if extra:
        page.screenshot(path=extra)


def test_hover_shows_the_shape(page: Any) -> None:
    line = 10  # x -> conv2d(16, kernel=3, padding=1).relu
    column = source_line(page, line).index("conv2d") + 3
    box = page.evaluate(
        """([line, column]) => {
            const view = window.aurane.source;
            const c = view.coordsAtPos(view.state.doc.line(line).from + column - 1);
            return {x: (c.left + c.right) / 2, y: (c.top + c.bottom) / 2};
        }""",
        [line, column],
    )
    page.mouse.move(box["x"], box["y"])
    tooltip = page.wait_for_selector(".aur-hover")
    assert tooltip is not None
    assert "conv2d(16, kernel=3, padding=1) \u2192 (16, 32, 32)" in tooltip.inner_text()
    assert "448 params" in tooltip.inner_text()


def test_click_a_layer_links_source_table_and_python(page: Any) -> None:
    node = page.locator("#diagram-inner .node", has_text="dense(10)")
    node.click()
    linked_source = page.inner_text("#source .cm-linked-line")
    assert "dense(10)" in linked_source
    assert "dense1" in page.inner_text("#layers tbody tr.linked")
    python = page.locator("#python .cm-linked-line").all_inner_texts()
    assert any("self.dense1" in text for text in python)
    # and back: a click on a generated line links its source line
    page.locator("#python .cm-line", has_text="self.conv2d1 = nn.Conv2d(3, 16").click()
    assert "conv2d(16, kernel=3, padding=1).relu" in page.inner_text("#source .cm-linked-line")
    assert "linked" in (page.locator("#diagram-inner .node").nth(1).get_attribute("class") or "")


def test_expand_collapse_pan_and_zoom(page: Any) -> None:
    assert page.locator("#diagram-inner .cluster").count() == 0
    page.locator("#diagram-inner .node.block").first.dblclick()
    page.wait_for_selector("#diagram-inner .cluster")
    assert page.locator("#diagram-inner .cluster").count() == 1
    assert page.locator("#diagram-inner .node.block").count() == 1  # the other stays folded
    page.click("#expand-all")
    page.wait_for_function("document.querySelectorAll('#diagram-inner .cluster').length === 2")
    page.locator("#diagram-inner .cluster-label").first.click()
    page.wait_for_function("document.querySelectorAll('#diagram-inner .cluster').length === 1")
    before = page.evaluate("document.getElementById('diagram-inner').style.transform")
    page.click("#zoom-in")
    after = page.evaluate("document.getElementById('diagram-inner').style.transform")
    assert before != after and "scale" in after
    pane = page.locator("#diagram").bounding_box()
    assert pane is not None
    page.mouse.move(pane["x"] + 20, pane["y"] + pane["height"] - 20)
    page.mouse.down()
    page.mouse.move(pane["x"] + 80, pane["y"] + pane["height"] - 60, steps=4)
    page.mouse.up()
    moved = page.evaluate("document.getElementById('diagram-inner').style.transform")
    assert moved != after


def test_save_writes_the_file(page: Any, program_file: Path) -> None:
    put_cursor(page, 1, 1)
    page.keyboard.type("# saved from the page\n")
    page.click("#save")
    page.wait_for_function("document.getElementById('status').textContent.startsWith('saved')")
    assert program_file.read_text(encoding="utf-8").startswith("# saved from the page\nmodel")
