"""The `.stet/` artifacts a repository commits or is about to commit, read from git itself."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pygit2

from stet_lsp.core.errors import StetError
from stet_lsp.core.targets import find_repository

STET_DIR = ".stet/"
CACHE_DIR = ".stet/cache/"


@dataclass(frozen=True)
class Artifact:
    label: str
    """`path` when HEAD and the index agree, else `HEAD:path` and `:path` (git's notation)."""
    path: str
    data: bytes


def open_repository(start: Path | None = None) -> pygit2.Repository:
    folder = start or Path(os.getcwd())
    repository = find_repository(folder)
    if repository is None:
        raise StetError(
            f"not inside a git repository: {folder} (run it in a repository's work tree, or "
            "name the files to check)"
        )
    return repository


def repository_root(repository: pygit2.Repository) -> Path:
    workdir = repository.workdir
    return Path(workdir) if workdir else Path(repository.path)


def _is_artifact(path: str) -> bool:
    return path.startswith(STET_DIR) and not path.startswith(CACHE_DIR)


def _walk(
    repository: pygit2.Repository, tree: pygit2.Tree, prefix: str
) -> Iterator[tuple[str, pygit2.Oid]]:
    for entry in tree:
        path = f"{prefix}{entry.name}"
        if entry.type_str == "tree":
            if (path + "/").startswith(CACHE_DIR):
                continue
            subtree = repository[entry.id]
            assert isinstance(subtree, pygit2.Tree)
            yield from _walk(repository, subtree, path + "/")
        elif entry.type_str == "blob":
            yield path, entry.id


def staged_index(repository: pygit2.Repository) -> pygit2.Index:
    """The index the commit being made is written from: the one `GIT_INDEX_FILE` names when
    set (`git commit -a` and `git commit PATH` give their hooks a temporary index, as the
    capstone does; a relative path is the work tree's top's, where git runs hooks), else the
    repository's. A named index that is not there is an error, not an empty index: read
    from the wrong folder, it would pass every staged secret."""
    named = os.environ.get("GIT_INDEX_FILE")
    if not named:
        index: pygit2.Index = repository.index
        return index
    path = os.path.join(repository_root(repository), named)  # an absolute `named` wins
    if not os.path.isfile(path):
        raise StetError(f"GIT_INDEX_FILE={named}: no index file at {path}")
    try:
        return pygit2.Index(path)
    except pygit2.GitError as error:
        raise StetError(f"GIT_INDEX_FILE={named}: {error}") from None


def committed_and_staged(repository: pygit2.Repository) -> list[Artifact]:
    """Every `.stet/` blob in HEAD's tree and in the index (`staged_index`), except
    `.stet/cache/`."""
    head: dict[str, pygit2.Oid] = {}
    try:
        unborn = repository.head_is_unborn
        tree = None if unborn else repository.head.peel(pygit2.Commit).tree
    except (pygit2.GitError, ValueError) as error:  # a reference loop, a name git refuses
        raise StetError(f"git cannot read HEAD in {repository.path}: {error}") from None
    if tree is not None and ".stet" in tree and tree[".stet"].type_str == "tree":
        stet_tree = repository[tree[".stet"].id]
        if isinstance(stet_tree, pygit2.Tree):
            head = dict(_walk(repository, stet_tree, STET_DIR))
    staged = {
        entry.path: entry.id
        for entry in staged_index(repository)
        # A submodule (a gitlink) names a commit of another repository: no content here.
        if _is_artifact(entry.path) and entry.mode != pygit2.enums.FileMode.COMMIT
    }
    artifacts: list[Artifact] = []
    for path in sorted(set(head) | set(staged)):
        in_head, in_index = head.get(path), staged.get(path)
        if in_head is not None and in_index is not None and in_head == in_index:
            artifacts.append(Artifact(path, path, _blob(repository, in_head, path)))
            continue
        if in_head is not None:
            label = f"HEAD:{path}"
            artifacts.append(Artifact(label, path, _blob(repository, in_head, label)))
        if in_index is not None:
            label = f":{path}"
            artifacts.append(Artifact(label, path, _blob(repository, in_index, label)))
    return artifacts


def _blob(repository: pygit2.Repository, oid: pygit2.Oid, label: str) -> bytes:
    """The blob's bytes; a blob the object store lacks (a damaged repository, a partial
    clone's blob never fetched) is an error: what cannot be read cannot pass."""
    try:
        blob = repository[oid]
    except (KeyError, pygit2.GitError):
        raise StetError(
            f"git cannot read {label}: its blob {oid} is not in the repository"
        ) from None
    if not isinstance(blob, pygit2.Blob):
        raise StetError(f"git cannot read {label}: {oid} is no blob")
    return bytes(blob.data)


def staged_cache(repository: pygit2.Repository) -> list[str]:
    """The `.stet/cache/` paths the index holds: working memory (style sheets, working
    trajectories) that git would commit, as when a cloned repository tracked its own."""
    return sorted(e.path for e in staged_index(repository) if e.path.startswith(CACHE_DIR))
