"""Reading the source for a build: every file listed and hashed (against the record of
the source's files an earlier build left, see load.contents), and every log parsed.

A source's files are read ahead by a forked copy, from the far end of the folder (see
``load.read_ahead``): when they are not in the system's memory, the build meets that
copy half way and finds the rest read.

A rebuild of a large source finds most of its files as recorded, yet listing them takes
one lstat each (270,000 for 100,000 calls), and parsing the log's rows as long again,
each on one core. When the record is large enough for it to pay, a forked copy of the
build lists the folder, saves the record and sends the listing back, while the build parses
the logs (``load_source`` waits for the listing only once a log is parsed), then analyses
and audits the run as parsed (see ``provisional``). A copy that fails leaves the reading to
the build, as in a first build: see ``forked``.

A first build has no record: it reads and hashes every file (1.8 million for a million
calls), and half of those a forked copy reads beside it (``_apart``), sending back their
hashes and bytes in one buffer; a copy that fails leaves its half to the build.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from functools import partial
from pathlib import Path

from reportgen.fork import Forked
from reportgen.pipeline.incremental import file_hashes_size, load_file_hashes, save_file_hashes
from reportgen.load.contents import Apart, FileHashes, ReadPart
from reportgen.load.read_ahead import read_ahead_behind
from reportgen.load.source import read_source
from reportgen.model.source import RunFiles, SourceSnapshot
from reportgen.pipeline.runner import Runner, start_apart

Drawings = Callable[[str, RunFiles], None]


class SourceReading:
    """The source folder being read for this build. ``drawings``: told of each run's SVG
    files as soon as the build itself reads them (see ``read_source``); a listing done
    apart reads them where no renderer waits, so they are drawn with the rest."""

    def __init__(self, source: Path, cache: Path | None, copies: contextlib.ExitStack,
                 drawings: Drawings | None, runner: Runner, version_label: str | None = None) -> None:
        self.source, self.cache, self.copies, self.drawings = source, cache, copies, drawings
        self.version_label = version_label
        self.runner = runner
        self.hashes: FileHashes | None = None
        self.copy: Forked[SourceSnapshot | None] | None = None
        self.done: SourceSnapshot | None = None
        self.read = False
        record_bytes = file_hashes_size(cache, source)
        self.ahead = self._read_ahead(record_bytes == 0)
        if runner.lists_apart(record_bytes):
            after = runner.saves_after_listing(record_bytes)
            # The listing is large (260 MB pickled at a million calls): written to a file in the cache.
            self.copy = Forked(partial(self._listed, save=not after), then=self._save if after else None,
                               spill=cache)
            copies.callback(self.copy.close)  # a failed build waits for it: it saves the record whole
        else:
            self.snapshot()  # at once: the SVGs start rendering while the logs are parsed

    @property
    def apart(self) -> bool:
        """Whether the folder is being listed by a forked copy (not read yet)."""
        return self.copy is not None and not self.read

    def snapshot(self) -> SourceSnapshot | None:
        """The source as ``read_source`` reads it; None when its configuration has problems."""
        if not self.read:
            self.done = self.copy.result() if self.copy is not None else None
            if self.done is None:
                self.copy = None  # not listed apart, or the copy failed: read here
                self.done = self._read(self.drawings, apart=self._apart)
            self.read = True
            if self.ahead is not None:
                self.ahead.stop()  # done with, or behind the build: of no more use
        return self.done

    def _read_ahead(self, contents: bool) -> Forked[int] | None:
        """A forked copy reading the experiments ahead of the build, from their far end,
        at the lowest priority (see ``load.read_ahead``): their files' bytes too when the
        build is to read them all (``contents``: there is no record of their hashes)."""
        if not self.runner.reads_ahead:
            return None
        ahead = Forked(partial(read_ahead_behind, str(self.source / "experiments"), contents))
        self.copies.callback(ahead.stop)
        return ahead

    def saving(self) -> Callable[[], object]:
        """The record of the files read, being saved; the function that finishes it.

        The record is let go of here, saved by a forked copy or, when none can be forked
        (the render thread is at work), by the build itself now, where it cost the same
        after the pages: held to the end, it was in the build's memory (37 MB at 100,000
        calls) and in every copy the page writers fork. Should a copy fail, no record
        is kept, and the next build reads every file again, as after a crash."""
        copy = self.copy
        if copy is not None:  # the copy saved it before sending the listing
            self.hashes = None
            return lambda: copy.close()
        size = len(self.hashes) if self.hashes is not None else 0
        finish = start_apart(self.runner, self.copies, self._save, size, optional=self._let_go)
        if self.hashes is None:  # a copy saves it
            return finish
        self._save()
        self._let_go()
        return lambda: None

    def _listed(self, save: bool) -> SourceSnapshot | None:
        """In the copy: the source listed, as the build would list it, without the bytes
        of the files it had to read (the logs, which the build reads itself, are most of
        them: sending them back cost more than reading them again; and held to the end
        of the listing, a million calls' log was 260 MB more in the copy). ``save``: the
        record saved before the listing is sent (else after: see ``Tuning``)."""
        snapshot = self._read(None, keep=False)
        if save:
            # So that the copy has ended (and its memory is gone) when the build unpickles
            # the listing: at a million calls they were 2 GB and 2.6 GB at once. The
            # build, which waits for the listing, waits for this too (some 3 s at a
            # million calls).
            self._save()
            # And let go of before the listing is pickled and sent: held through the
            # sending, this build's record kept some 150 MB more of the copy beside the
            # listing the build was reading.
            self._let_go()
        return snapshot

    def _read(self, drawings: Drawings | None, keep: bool = True, apart: Apart | None = None) -> SourceSnapshot | None:
        """The source read against the earlier build's record of its files, which is
        dropped once read (this build's own record is what is saved). ``keep``: the
        bytes of the files read to be hashed are kept; ``apart``: where some are read
        by a forked copy (see ``read_run_files``)."""
        self.hashes = load_file_hashes(self.cache, self.source)
        snapshot = read_source(self.source, self.hashes, drawings, self.version_label, keep, apart)
        if self.hashes is not None:
            self.hashes.read_through()
        return snapshot

    def _apart(self, step: Callable[[], ReadPart], size: int) -> Callable[[], ReadPart | None] | None:
        """``step``, reading ``size`` of the source's files, in a forked copy of the build
        when they are enough for it to pay (a first build of a large source, which reads
        every file on one core otherwise); the function that waits for what it read."""
        if not self.runner.steps_apart(size):
            return None
        # The bytes of the files it read are large: written to a file in the cache, the
        # copy ends once they are, rather than waiting, whole, for the build to take them
        # (at a million calls 1.2 GB of copy beside the build's 2.1 GB). A first build's
        # cache folder is made here, as its renders would make it.
        copy = Forked(step, spill=_made(self.cache))
        if copy.pid is None:
            return None  # not forked (a thread is running): the build reads them itself
        self.copies.callback(copy.stop)  # a failed build leaves no copy behind
        return copy.result

    def _save(self) -> None:
        save_file_hashes(self.cache, self.source, self.hashes)  # nothing once let go of

    def _let_go(self) -> None:
        self.hashes = None


def _made(folder: Path | None) -> Path | None:
    """``folder``, made if it is not there yet; None when it cannot be made."""
    if folder is None:
        return None
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return folder
