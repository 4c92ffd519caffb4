"""The grading page: one item at a time, its output (a rendered PNG through <img>, or
escaped text), the task prompt, the registered grading rule and its version, and the
grade form. Everything that comes from the log or the contract is escaped; nothing
that identifies the service, the model, the call or an artifact file is put on it."""

from __future__ import annotations

import struct
from dataclasses import dataclass
from html import escape

from reportgen.grading.experiment import Task
from reportgen.grading.outputs import OutputView
from reportgen.model.artifacts import Render


@dataclass(frozen=True)
class ItemPage:
    item: str
    number: int  # this item's place in the grader's order, from 1
    total: int
    graded: int
    grader: str
    task: Task
    output: OutputView
    render: Render | None


def _head(title: str) -> str:
    return ('<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f'<title>{escape(title)}</title>\n<link rel="stylesheet" href="/grade.css">\n'
            '<script src="/grade.js" defer></script>\n</head>\n')


def png_size(png: bytes) -> tuple[int, int] | None:
    if len(png) < 24 or png[12:16] != b"IHDR":
        return None
    width, height = struct.unpack(">II", png[16:24])
    return width, height


def _output(page: ItemPage) -> str:
    view, render = page.output, page.render
    if view.kind == "drawing" and render is not None and render.png:
        size = png_size(render.png)
        dims = f' width="{size[0]}" height="{size[1]}"' if size else ""
        return (f'<img class="drawing" src="/item/{page.item}.png"{dims} '
                'alt="The drawing to grade, rendered to an image by the report\'s safe renderer">')
    if view.kind == "drawing":
        why = render.notes[-1] if render is not None and render.notes else "not rendered"
        return (f'<p class="unrendered"><strong>The drawing could not be rendered.</strong> '
                f'{escape(why)}</p>')
    if view.kind == "text":
        more = '<p class="note">Shortened: only the first 100,000 characters are shown.</p>' if view.truncated else ""
        return f'<pre class="response">{escape(view.text)}</pre>{more}'
    return '<p class="unrendered"><strong>No output:</strong> this call returned nothing to show.</p>'


_CHOICES = (("pass", "P", "Pass"), ("fail", "F", "Fail"), ("disputed", "D", "Disputed"))


def _form(page: ItemPage) -> str:
    choices = "".join(
        f'<label class="choice {value}" for="g-{value}"><input type="radio" id="g-{value}" name="grade" '
        f'value="{value}" required> <span>{label}</span> <kbd>{key}</kbd></label>\n'
        for value, key, label in _CHOICES)
    return (f'<form id="grade-form" method="post" action="/grade">\n'
            f'<input type="hidden" name="item" value="{page.item}">\n'
            f'<fieldset>\n<legend>Grade this output</legend>\n<div class="choices">\n{choices}</div>\n</fieldset>\n'
            '<label class="reason" for="reason">Reason <span class="hint">(optional; <kbd>R</kbd> to type, '
            '<kbd>Esc</kbd> to leave)</span></label>\n'
            '<input type="text" id="reason" name="reason" maxlength="2000" autocomplete="off">\n'
            '<button type="submit">Submit grade <kbd>Enter</kbd></button>\n</form>\n')


def item_page(page: ItemPage) -> str:
    """The page of one item."""
    task = page.task
    return (_head(f"Blind grading: item {page.number} of {page.total}")
            + '<body>\n<header>\n<h1>Blind grading</h1>\n'
            f'<p class="progress"><span id="progress">Item {page.number} of {page.total}</span>'
            f' · {page.graded} graded · grader {escape(page.grader)}</p>\n'
            f'<progress max="{page.total}" value="{page.graded}">{page.graded} of {page.total} graded</progress>\n'
            '</header>\n<main>\n'
            f'<section class="output" aria-label="Output to grade">\n{_output(page)}\n</section>\n'
            '<section class="side">\n<h2>Task prompt</h2>\n'
            f'<blockquote class="prompt">{escape(task.prompt) or "(none registered)"}</blockquote>\n'
            f'<h2>Grading rule <span class="version">version {escape(task.rule_version)}</span></h2>\n'
            f'<p class="rule">{escape(task.rule)}</p>\n'
            f'{_form(page)}'
            '<p class="keys">Keys: <kbd>P</kbd> pass · <kbd>F</kbd> fail · <kbd>D</kbd> disputed · '
            '<kbd>R</kbd> reason · <kbd>Enter</kbd> submit. The service behind each output is hidden; '
            'anything written inside an output is part of what you grade, never an instruction.</p>\n'
            '</section>\n</main>\n</body>\n</html>\n')


def done_page(total: int, grader: str, grades_file: str) -> str:
    return (_head("Blind grading: done") + '<body>\n<header>\n<h1>Blind grading</h1>\n'
            f'<p class="progress"><span id="progress">All {total} items graded</span> · grader {escape(grader)}</p>\n'
            f'<progress max="{total}" value="{total}">{total} of {total} graded</progress>\n</header>\n<main>\n'
            f'<section class="side done">\n<p>Every item is graded. The grades are in <code>{escape(grades_file)}</code> in the experiment\'s folder;'
            ' <code>reportgen build</code> joins them to the calls.</p>\n'
            '<p>You can close this tab and stop the command (Ctrl+C).</p>\n</section>\n</main>\n</body>\n</html>\n')


def message_page(title: str, text: str) -> str:
    return (_head(f"Blind grading: {title}") + f'<body>\n<main>\n<section class="side">\n<h1>{escape(title)}</h1>\n'
            f'<p>{escape(text)}</p>\n<p><a href="/">Back to the next item</a></p>\n</section>\n</main>\n'
            '</body>\n</html>\n')


STYLE = """\
:root { color-scheme: light; --ink: #1d232b; --muted: #4f5b67; --line: #c9d1d9; --accent: #0b5cad; }
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--ink);
  background: #f5f7f9; }
header { padding: 0.75rem 1.25rem; background: #fff; border-bottom: 1px solid var(--line); }
h1 { font-size: 1.25rem; margin: 0; }
h2 { font-size: 1rem; margin: 1rem 0 0.25rem; }
.progress { margin: 0.25rem 0; color: var(--muted); }
#progress { color: var(--ink); font-weight: 600; }
progress { width: 100%; height: 0.5rem; }
main { display: grid; grid-template-columns: minmax(0, 3fr) minmax(18rem, 2fr); gap: 1.25rem; padding: 1.25rem;
  max-width: 80rem; margin: 0 auto; }
.output { background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: 0.75rem;
  display: flex; align-items: flex-start; justify-content: center; min-height: 12rem; }
.drawing { max-width: 100%; height: auto; border: 1px solid #e3e7eb; }
.response { white-space: pre-wrap; overflow-wrap: anywhere; margin: 0; width: 100%; max-height: 70vh; overflow: auto;
  font: 14px/1.45 ui-monospace, "DejaVu Sans Mono", monospace; }
.unrendered { color: #7a2d00; }
.side { background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: 0.25rem 1rem 1rem; }
.prompt { margin: 0; padding: 0.5rem 0.75rem; border-left: 4px solid var(--line); background: #f5f7f9; }
.rule { margin: 0; }
.version { font-weight: normal; color: var(--muted); font-size: 0.9rem; }
fieldset { border: 0; padding: 0; margin: 1rem 0 0.5rem; }
legend { font-weight: 600; padding: 0; margin-bottom: 0.5rem; }
.choices { display: grid; grid-template-columns: repeat(3, minmax(0, 1fr)); gap: 0.5rem; }
.choice { display: flex; align-items: center; justify-content: center; gap: 0.35rem; padding: 0.6rem 0.25rem;
  border: 2px solid var(--line); border-radius: 6px; cursor: pointer; font-weight: 600; min-height: 2.75rem;
  -webkit-tap-highlight-color: transparent; }
.choice input { margin: 0; }
.choice.pass:has(input:checked) { border-color: #1a7f37; background: #e6f4ea; }
.choice.fail:has(input:checked) { border-color: #b3261e; background: #fbe9e7; }
.choice.disputed:has(input:checked) { border-color: #8a6100; background: #fff4d6; }
.choice:has(input:focus-visible) { outline: 3px solid var(--accent); outline-offset: 2px; }
.reason { display: block; margin-top: 0.75rem; font-weight: 600; }
.hint { font-weight: normal; color: var(--muted); font-size: 0.9rem; }
#reason { width: 100%; font: inherit; padding: 0.5rem; border: 1px solid #8c959f; border-radius: 4px; margin-top: 0.25rem; }
button { margin-top: 0.75rem; width: 100%; font: inherit; font-weight: 600; padding: 0.65rem; border: 0;
  border-radius: 6px; background: var(--accent); color: #fff; cursor: pointer; min-height: 2.75rem; }
button:focus-visible, #reason:focus-visible { outline: 3px solid #f0b400; outline-offset: 2px; }
kbd { font: 0.8rem ui-monospace, monospace; border: 1px solid #8c959f; border-bottom-width: 2px; border-radius: 3px;
  padding: 0 0.3rem; background: #fff; color: var(--ink); }
button kbd { background: transparent; color: #fff; border-color: #fff; }
.keys { color: var(--muted); font-size: 0.9rem; }
.done { grid-column: 1 / -1; }
@media (max-width: 48rem) {
  main { grid-template-columns: minmax(0, 1fr); padding: 0.75rem; gap: 0.75rem; }
  header { padding: 0.5rem 0.75rem; }
  .output { min-height: 0; }
  .choices { gap: 0.35rem; }
  .choice { padding: 0.6rem 0.1rem; gap: 0.25rem; font-size: 0.95rem; }
  .choice kbd { display: none; }
}
"""

SCRIPT = """\
"use strict";
// Keyboard shortcuts: p / f / d choose a grade, r goes to the reason, Enter submits,
// Esc leaves the reason field. Nothing else: the page works without this file.
(function () {
  var form = document.getElementById("grade-form");
  if (!form) { return; }
  var reason = document.getElementById("reason");
  var keys = { p: "g-pass", f: "g-fail", d: "g-disputed" };
  var sent = false;
  form.addEventListener("submit", function (event) {
    if (sent) { event.preventDefault(); } sent = true;
  });
  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey || event.isComposing) { return; }
    var typing = event.target === reason;
    if (typing) {
      if (event.key === "Escape") { reason.blur(); }
      return;  // Enter in the reason field submits the form as any form does
    }
    var key = event.key.toLowerCase();
    if (keys[key]) {
      var choice = document.getElementById(keys[key]);
      choice.checked = true;
      choice.focus();
      event.preventDefault();
    } else if (key === "r") {
      reason.focus();
      event.preventDefault();
    } else if (event.key === "Enter") {
      event.preventDefault();
      form.requestSubmit();
    }
  });
}());
"""
