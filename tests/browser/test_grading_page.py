"""The blind grading page in a real Chromium: 20 items graded by keyboard with nothing on
the page that names a service, a model or a call; a different order for another
grader; a closed tab resumes; the grades file stays valid through SIGKILLs of the
server; screenshots at 1280 and 390 px wide.

The server runs as `reportgen grade` does, in its own process. Marked slow (this folder's
conftest), like every browser test; it needs no built demo."""

from __future__ import annotations

import csv
import io
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlencode
from urllib.request import urlopen

import pytest

import pagecheck

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from grading_source import call_rows, identifying_strings, pelican_source  # noqa: E402

EXP = "pelican-ab"
KEYS = "pfd"
WORDS = {"p": "pass", "f": "fail", "d": "disputed"}

# Every attribute of every element, and the page's text, as the reader's browser has them.
ATTRIBUTES_JS = """() => Array.from(document.querySelectorAll('*')).flatMap(
    e => Array.from(e.attributes).map(a => a.name + '=' + a.value))"""


@pytest.fixture
def chromium(browser):
    """The session's Chromium (this folder's conftest): one Playwright per test process,
    since a second sync Playwright cannot start while the first runs."""
    return browser


class GradeCommand:
    """`reportgen grade SOURCE pelican-ab --grader NAME` in a process of its own."""

    def __init__(self, source: Path, grader: str, *extra: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "reportgen.cli", "grade", str(source), EXP, "--grader", grader,
             "--port", "0", "--no-browser", *extra],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert self.process.stdout is not None
        line = self.process.stdout.readline().strip()
        if not line.startswith("http://127.0.0.1:"):
            self.process.kill()
            raise AssertionError(f"no address from reportgen grade: {line!r} {self.process.stderr.read()!r}")
        self.url = line

    def kill(self) -> None:
        """SIGKILL: no handler runs, nothing is flushed or cleaned up."""
        os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=30)
        self.close_pipes()

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=30)
        self.close_pipes()

    def close_pipes(self) -> None:
        for pipe in (self.process.stdout, self.process.stderr):
            if pipe is not None:
                pipe.close()


def grades_rows(source: Path, grader: str) -> list[list[str]]:
    """The grader's grades file, which must be a valid CSV with the format's header."""
    path = source / "experiments" / EXP / "grades" / f"{grader}.csv"
    if not path.exists():
        return []
    rows = list(csv.reader(io.StringIO(path.read_text("utf-8"), newline="")))
    assert rows[0] == ["item", "grade", "reason", "graded_at", "rule_version"]
    assert all(len(row) == 5 and row[1] in WORDS.values() for row in rows[1:]), rows
    assert len({row[0] for row in rows[1:]}) == len(rows) - 1
    return rows[1:]


def current_item(page) -> str:
    item = page.locator('input[name="item"]')
    assert item.count() == 1, page.content()[:2000]
    return item.get_attribute("value")


def check_blind(page, forbidden: set[str], letters: set[str]) -> None:
    text = page.locator("body").inner_text()
    attributes = "\n".join(page.evaluate(ATTRIBUTES_JS))
    for where, content in (("text", text), ("attributes", attributes), ("url", page.url),
                           ("title", page.title())):
        for word in forbidden:
            assert word not in content, f"the page's {where} shows {word!r}"
        for letter in letters:  # the demo's services are single letters: never a word of their own
            assert not re.search(rf"(?<![\w-]){letter}(?![\w-])", content), f"the page's {where} shows {letter!r}"


def open_page(context, url: str, errors: list[str]):
    page = context.new_page()
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(url)
    return page


def grade_by_keyboard(page, number: int, total: int, key: str, reason: str = "") -> None:
    assert page.locator("#progress").inner_text() == f"Item {number} of {total}"
    page.keyboard.press(key)
    assert page.locator(f"#g-{WORDS[key]}").is_checked()
    if reason:
        page.keyboard.press("r")
        page.keyboard.type(reason)
    with page.expect_navigation():
        page.keyboard.press("Enter")


def test_twenty_items_graded_by_keyboard_blind_resumable_and_in_an_order_per_grader(chromium, tmp_path,
                                                                                    screenshot_dir):
    source = pelican_source(tmp_path, rename=True)
    forbidden = identifying_strings(source)
    letters: set[str] = set()
    plain = pelican_source(tmp_path / "plain")  # the demo as it is: services A and B
    letters = {row["service"] for row in call_rows(plain)}
    server = GradeCommand(source, "ann", "--sample", "20", "--seed", "11")
    errors: list[str] = []
    context = chromium.new_context(viewport=pagecheck.DESKTOP)
    ann_order: list[str] = []
    try:
        page = open_page(context, server.url, errors)
        page.screenshot(path=str(screenshot_dir / "grading-1280.png"), full_page=True)
        for number in range(1, 21):
            if number == 9:  # close the tab mid-way; a new one continues at the first ungraded item
                page.close()
                page = open_page(context, server.url, errors)
            check_blind(page, forbidden, set())
            ann_order.append(current_item(page))
            reason = f"reason number {number}, with a comma" if number % 4 == 0 else ""
            if number == 4:  # a grade chosen and a reason being typed, as the grader sees it
                page.keyboard.press(KEYS[number % 3])
                page.keyboard.press("r")
                page.keyboard.type("wheels float")
                page.screenshot(path=str(screenshot_dir / "grading-chosen-1280.png"), full_page=True)
                page.locator("#reason").fill("")
                page.keyboard.press("Escape")
            grade_by_keyboard(page, number, 20, KEYS[number % 3], reason)
        assert page.locator("#progress").inner_text() == "All 20 items graded"
        page.screenshot(path=str(screenshot_dir / "grading-done-1280.png"), full_page=True)
    finally:
        context.close()
        server.stop()
    assert not errors, errors  # a CSP violation shows here
    rows = grades_rows(source, "ann")
    assert [row[0] for row in rows] == ann_order and len(set(ann_order)) == 20
    assert [row[1] for row in rows] == [WORDS[KEYS[n % 3]] for n in range(1, 21)]
    assert rows[3][2] == "reason number 4, with a comma" and rows[0][2] == ""
    assert all(row[4] == "1" and re.search(r"[+-]\d\d:\d\d$", row[3]) for row in rows)

    # The demo as it is: its one-letter service names never stand alone on the page.
    server = GradeCommand(plain, "bob", "--sample", "20", "--seed", "11")
    context = chromium.new_context(viewport=pagecheck.DESKTOP)
    bob_order: list[str] = []
    try:
        page = open_page(context, server.url, errors)
        for number in range(1, 6):
            check_blind(page, forbidden, letters)
            bob_order.append(current_item(page))
            grade_by_keyboard(page, number, 20, "p")
    finally:
        context.close()
        server.stop()
    # The same seed draws the same items: bob's first five, in an order of his own.
    assert set(bob_order) <= set(ann_order) and bob_order != ann_order[:5]
    assert not errors, errors


def send_grade(url: str, item: str, grade: str, *, wait: bool = True) -> socket.socket | None:
    """POST a grade as the page's form does, over a plain socket. With wait=False the
    request is sent and left unanswered (the socket is returned), so that the server can be
    killed while it handles the grade; the browser is kept out of that moment on purpose:
    a navigation cut off by SIGKILL is the server's property to test, not Chromium's."""
    host = url.removeprefix("http://").rstrip("/")
    body = urlencode({"item": item, "grade": grade, "reason": ""}).encode("ascii")
    head = (f"POST /grade HTTP/1.1\r\nHost: {host}\r\nOrigin: http://{host}\r\n"
            "Content-Type: application/x-www-form-urlencoded\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode("ascii")
    name, port = host.rsplit(":", 1)
    conn = socket.create_connection((name, int(port)), timeout=10)
    conn.sendall(head + body)
    if not wait:
        return conn
    with conn:
        answer = conn.makefile("rb").readline()
    assert answer.split()[1:2] == [b"303"], answer  # graded; the next item follows
    return None


def waiting_item(url: str) -> tuple[str, str]:
    """The item the server waits for, and its progress line, read from the page's HTML."""
    with urlopen(url, timeout=10) as answer:
        html = answer.read().decode("utf-8")
    item = re.search(r'<input[^>]*name="item"[^>]*value="([^"]+)"', html)
    progress = re.search(r'id="progress"[^>]*>([^<]+)<', html)
    assert item and progress, html[:2000]
    return item.group(1), progress.group(1).strip()


def test_the_grades_file_is_valid_after_each_sigkill_and_grading_resumes(chromium, tmp_path):
    source = pelican_source(tmp_path)
    graded = 0
    # Kill the server at several moments: as a grade is sent, a little after, a little
    # later still, and while no grade is being sent.
    moments = [0.0, 0.002, 0.01, 0.03, None]
    for moment in moments:
        server = GradeCommand(source, "kim", "--sample", "20", "--seed", "3")
        try:
            for _ in range(2):  # two whole grades, then one cut short
                item, progress = waiting_item(server.url)
                assert progress == f"Item {graded + 1} of 20"  # resumed
                send_grade(server.url, item, "fail")
                graded += 1
            conn = None
            if moment is not None:
                item, _ = waiting_item(server.url)
                conn = send_grade(server.url, item, "pass", wait=False)
                time.sleep(moment)
            server.kill()
            if conn is not None:
                conn.close()
        finally:
            server.stop()
        rows = grades_rows(source, "kim")  # valid whatever the moment
        assert len(rows) in (graded, graded + 1)
        graded = len(rows)
    # A reader's browser takes up where the killed servers left off.
    server = GradeCommand(source, "kim")
    try:
        context = chromium.new_context(viewport=pagecheck.DESKTOP)
        try:
            page = open_page(context, server.url, [])
            assert page.locator("#progress").inner_text() == f"Item {graded + 1} of 20"
        finally:
            context.close()
    finally:
        server.stop()
    assert not list((source / "experiments" / EXP / "grades").glob(".kim.csv.*"))  # what a kill left: removed


def test_the_page_is_usable_at_390_px(chromium, tmp_path, screenshot_dir):
    source = pelican_source(tmp_path)
    server = GradeCommand(source, "lee", "--sample", "4", "--seed", "2")
    context = chromium.new_context(**pagecheck.VIEWPORTS["phone"])
    errors: list[str] = []
    try:
        page = open_page(context, server.url, errors)
        page.screenshot(path=str(screenshot_dir / "grading-390.png"), full_page=True)
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        image = page.locator("img.drawing")
        if image.count():
            assert image.bounding_box()["width"] <= 390
            assert page.evaluate("document.querySelector('img.drawing').naturalWidth") > 0
        for label in ("pass", "fail", "disputed"):
            box = page.locator(f"label.choice.{label}").bounding_box()
            assert box["x"] >= 0 and box["x"] + box["width"] <= 390 and box["height"] >= 40, (label, box)
        page.locator("label.choice.fail").tap()
        page.locator("#reason").fill("the wheels float")
        page.screenshot(path=str(screenshot_dir / "grading-390-chosen.png"), full_page=True)
        with page.expect_navigation():
            page.locator("button[type=submit]").tap()
        assert page.locator("#progress").inner_text() == "Item 2 of 4"
        page.screenshot(path=str(screenshot_dir / "grading-390-item2.png"), full_page=True)
    finally:
        context.close()
        server.stop()
    assert grades_rows(source, "lee")[0][1:3] == ["fail", "the wheels float"]
    assert not errors, errors
