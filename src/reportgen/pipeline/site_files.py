"""The files beside the versions: versions.json, index.html, 404.html, and the page of
changes since the version this one supersedes."""

from __future__ import annotations

from pathlib import Path

from reportgen.progress import Progress
from reportgen.model.config import SiteConfig
from reportgen.model.source import ValidatedSource
from reportgen.published.diff import diff_versions
from reportgen.render.theme import theme_environment
from reportgen.published.review import write_diff_page
from reportgen.write.version import VersionEntry, write_site_index


def write_site_files(out: Path, root: Path, config: SiteConfig, label: str, digest: str, built_at: str,
                     folder: Path, progress: Progress, source: ValidatedSource | None = None,
                     changes: bool = True) -> None:
    """The files beside the versions: versions.json, index.html, 404.html, and unless
    ``changes`` is False, the changes page (``source``: what ``folder`` was built from,
    when it publishes it unchanged)."""
    env = theme_environment(root, config.theme)
    write_site_index(out, VersionEntry(label, config.title, built_at, digest), env, config.base_url, config.previous,
                     progress.stage)
    if changes:
        write_previous_diff(out, root, config, folder, progress, source)


def write_previous_diff(out: Path, root: Path, config: SiteConfig, folder: Path, progress: Progress,
                        source: ValidatedSource | None = None) -> None:
    """site/diff/<previous>..<label>/index.html, when the source names the version it
    supersedes and that version is here."""
    previous = config.previous
    env = theme_environment(root, config.theme)
    if previous and (out / previous / "manifest.json").is_file():
        progress.stage(f"comparing with {previous}")
        try:
            changes = diff_versions(out / previous, folder, source)
            write_diff_page(out / "diff" / f"{changes.old}..{changes.new}", changes, env, out / previous, folder)
        except Exception as exc:  # the new version is complete and published either way
            progress.stage(f"warning: the page of changes since {previous} was not written: {exc}")
    elif previous:
        progress.stage(f"warning: {out / previous} is not here, so the page of changes since {previous} "
                 "was not written (its link will not resolve)")
