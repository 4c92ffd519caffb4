"""Command line: build (and, as they land, check, verify, diff, serve)."""

from __future__ import annotations

import sys
import traceback
from pathlib import Path

import click

from . import __version__
from .errors import InputError, ReportgenError


def _fail(exc: Exception, debug: bool) -> None:
    if debug:
        traceback.print_exc()
    if isinstance(exc, InputError):
        for problem in exc.problems:
            click.echo(f"error: {problem}", err=True)
        n = len(exc.problems)
        click.echo(f"{n} problem{'s' if n != 1 else ''} found; nothing was written.", err=True)
    elif isinstance(exc, ReportgenError):
        click.echo(f"error: {exc}", err=True)
    else:
        click.echo(f"internal error: {type(exc).__name__}: {exc} (run with --debug for the traceback; "
                   "please report it)", err=True)
    sys.exit(1)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="reportgen")
@click.option("--debug", is_flag=True, help="Show tracebacks for errors.")
@click.pass_context
def main(ctx: click.Context, debug: bool) -> None:
    """Turn a pre-registered evaluation run into a static, versioned, auditable website."""
    ctx.obj = {"debug": debug}


@main.command()
@click.argument("source", default="content", type=click.Path(path_type=Path, file_okay=False))
@click.option("--out", default="site", show_default=True, type=click.Path(path_type=Path, file_okay=False),
              help="Site folder; the version is written to OUT/<version>/.")
@click.option("--version", "version_label", default=None,
              help="Version label to build (default: `version` in reportgen.toml).")
@click.option("--force", is_flag=True, help="Replace a published version built from another source.")
@click.option("--quiet", "-q", is_flag=True, help="Print only errors and the summary line.")
@click.pass_context
def build(ctx: click.Context, source: Path, out: Path, version_label: str | None, force: bool, quiet: bool) -> None:
    """Build SOURCE (default: content/) into OUT/<version>/ (default: site/)."""
    from .build import build_site

    def progress(message: str) -> None:
        if not quiet:
            click.echo(f"  {message}", err=True)

    try:
        summary = build_site(source, out, version_label, force, progress)
    except Exception as exc:  # every failure becomes one clear message
        _fail(exc, ctx.obj["debug"])
        return
    failures = f", {summary.n_render_failures} not renderable" if summary.n_render_failures else ""
    click.echo(f"built {summary.folder}: {summary.n_calls} calls, {summary.n_claims} claims, "
               f"{summary.n_pages} pages, {summary.n_drawings} drawings ({summary.n_renders} distinct"
               f"{failures}), in {summary.seconds:.1f} s")


if __name__ == "__main__":  # pragma: no cover
    main()
