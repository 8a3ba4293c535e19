"""Finalize's page files go into one pages.zip; every other output stays its own object."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest
from mdcrawl.adapters.aws.packing import PagePacker
from mdcrawl.adapters.local.blobs import FileBlobStore
from mdcrawl.names import job_key


class CountingStore(FileBlobStore):
    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.writes: list[str] = []

    def writer(self, key: str, content_type: str = "text/markdown; charset=utf-8"):  # type: ignore[no-untyped-def]
        self.writes.append(key)
        return super().writer(key, content_type)


def packer_for(store: CountingStore) -> PagePacker:
    return PagePacker(store, "j1", lambda name: store.writer(job_key("j1", name)))


def write(packer: PagePacker, name: str, text: str) -> None:
    with packer.open_output(name) as out:
        out.write(text.encode())


def zipped(store: FileBlobStore) -> dict[str, str]:
    data = store.get(job_key("j1", "pages.zip"))
    assert data is not None
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return {name: archive.read(name).decode() for name in archive.namelist()}


def test_page_files_are_entries_of_one_zip_finished_before_the_next_output(
    tmp_path: Path,
) -> None:
    store = CountingStore(tmp_path)
    packer = packer_for(store)
    with packer.open_output("docs.md") as docs:  # assembly streams docs.md meanwhile
        docs.write(b"# Docs\n")
        write(packer, "pages/0001-intro.md", "# Intro\n[next](0002-next.md)\n")
        write(packer, "pages/0002-next.md", "# Next\n")
    assert not store.exists(job_key("j1", "pages.zip"))  # still open
    write(packer, "llms.txt", "# Site\n")
    # Complete before assembly goes on (and so before the job is marked completed).
    assert zipped(store) == {
        "pages/0001-intro.md": "# Intro\n[next](0002-next.md)\n",
        "pages/0002-next.md": "# Next\n",
    }
    packer.finish()  # idempotent
    assert packer.output_key("pages/") == job_key("j1", "pages.zip")  # the pages result
    assert packer.output_key("docs.md") == job_key("j1", "docs.md")
    assert store.get(job_key("j1", "docs.md")) == b"# Docs\n"
    assert sorted(store.writes) == sorted(
        job_key("j1", n) for n in ("docs.md", "pages.zip", "llms.txt")
    )
    with pytest.raises(RuntimeError):  # a page file after the zip is finished is a bug
        write(packer, "pages/0003-late.md", "late")


def test_a_failed_assembly_leaves_no_zip(tmp_path: Path) -> None:
    store = CountingStore(tmp_path)
    packer = packer_for(store)
    write(packer, "pages/0001-intro.md", "# Intro\n")
    packer.abort(RuntimeError("assembly failed"))
    assert not store.exists(job_key("j1", "pages.zip"))
    assert list(tmp_path.rglob("*.zip")) == []


def test_no_page_files_no_zip(tmp_path: Path) -> None:
    store = CountingStore(tmp_path)
    packer = packer_for(store)
    write(packer, "docs.md", "# Docs\n")
    packer.finish()
    assert store.writes == [job_key("j1", "docs.md")]
