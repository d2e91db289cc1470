"""Which project a shared store's items belong to: memsift/_fs/scope.py, on real git repositories."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from memsift._fs.scope import identity, normalised_remote, scope_name

git = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def repository(folder: Path, *remotes: tuple[str, str]) -> Path:
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    for name, url in remotes:
        subprocess.run(["git", "-C", str(folder), "remote", "add", name, url], check=True)
    return folder


@pytest.mark.parametrize("url", [
    "git@github.com:acme/shop.git", "https://github.com/acme/shop", "https://github.com/Acme/Shop.git/",
    "ssh://git@github.com:22/acme/shop.git", "https://ci-bot:ghp_s3cret@github.com/acme/shop.git",
    "git+ssh://git@github.com/acme/shop",
])
def test_every_spelling_of_one_remote_is_one_project(url):
    assert normalised_remote(url) == "github.com/acme/shop"


def test_a_remote_s_password_never_reaches_the_scope():
    assert "s3cret" not in normalised_remote("https://me:s3cret@gitlab.example.com/team/api.git")


@git
def test_two_clones_of_one_repository_share_a_scope_whatever_their_folders(tmp_path):
    here = repository(tmp_path / "checkout", ("origin", "git@github.com:acme/shop.git"))
    there = repository(tmp_path / "elsewhere" / "shop-copy", ("origin", "https://github.com/acme/shop"))

    assert identity(here) == identity(there) == "github.com/acme/shop"
    assert scope_name(here) == scope_name(there)
    assert re.fullmatch(r"shop-[0-9a-f]{12}", scope_name(here))


@git
def test_two_projects_of_the_same_name_on_two_hosts_are_two_scopes(tmp_path):
    ours = repository(tmp_path / "a" / "api", ("origin", "git@github.com:acme/api.git"))
    theirs = repository(tmp_path / "b" / "api", ("origin", "git@github.com:globex/api.git"))

    assert scope_name(ours) != scope_name(theirs)
    assert scope_name(ours).startswith("api-") and scope_name(theirs).startswith("api-")


@git
def test_origin_names_the_project_when_there_are_several_remotes(tmp_path):
    fork = repository(tmp_path / "fork", ("upstream", "git@github.com:acme/shop.git"),
                      ("origin", "git@github.com:me/shop.git"))
    only_upstream = repository(tmp_path / "other", ("upstream", "git@github.com:acme/shop.git"))

    assert identity(fork) == "github.com/me/shop"
    assert identity(only_upstream) == "github.com/acme/shop"


@git
def test_a_worktree_reads_its_repository_s_remote(tmp_path):
    main = repository(tmp_path / "main", ("origin", "git@github.com:acme/shop.git"))
    subprocess.run(["git", "-C", str(main), "-c", "user.name=t", "-c", "user.email=t@example.com",
                    "commit", "-q", "--allow-empty", "-m", "start"], check=True)
    subprocess.run(["git", "-C", str(main), "worktree", "add", "-q", str(tmp_path / "wt")], check=True)

    assert (tmp_path / "wt" / ".git").is_file()
    assert identity(tmp_path / "wt") == identity(main) == "github.com/acme/shop"


@git
def test_without_a_remote_a_project_is_its_folder_on_this_machine_alone(tmp_path):
    one = repository(tmp_path / "one" / "app")
    other = repository(tmp_path / "other" / "app")
    plain = tmp_path / "scratch"
    plain.mkdir()

    assert identity(one).startswith("folder:") and identity(one).endswith(str(one.resolve()))
    assert scope_name(one) != scope_name(other)  # the same name is not the same project
    assert scope_name(plain).startswith("scratch-")


def test_a_git_file_that_points_nowhere_is_no_remote(tmp_path):
    (tmp_path / ".git").write_text("gitdir: /nowhere/at/all\n")
    assert identity(tmp_path).startswith("folder:")


def test_a_scope_name_is_a_name_cognee_accepts(tmp_path):
    odd = tmp_path / "My Project.v2 (old)"
    odd.mkdir()
    (odd / ".git").mkdir()
    (odd / ".git" / "config").write_text('[remote "origin"]\n\turl = https://example.com/Team/My.Project v2.git\n')

    assert re.fullmatch(r"[a-z0-9_-]+", scope_name(odd))


# -- the embedded store holds the same promise: a file per project ---------------------------

def test_the_embedded_store_keeps_two_projects_apart(tmp_path):
    from attrs import evolve

    from memsift.config import load_config
    from memsift.pipeline import recall, retain
    from memsift.services import open_services
    from memsift.stages import EVERY_MESSAGE_STAGES, distill, redact_exchange, sync
    from memsift.types import Category, Exchange, Message

    def keep_it(services, state):  # these tests are about where a kept exchange goes, not whether
        return evolve(state, keep=True, category=Category.DECISION)

    config = load_config({"MEMSIFT_HOME": str(tmp_path / "home")})
    acme, globex = (tmp_path / "clients" / "acme", tmp_path / "clients" / "globex")
    for folder in (acme, globex):
        folder.mkdir(parents=True)
    exchange = Exchange("Which queue does the invoice exporter use?",
                        "The acme invoice exporter moved to the Postgres-backed queue after Redis "
                        "dropped 40 invoices.", "a1")
    ours, theirs = open_services(config, acme), open_services(config, globex)

    assert retain(exchange, ours, (redact_exchange, keep_it, distill, sync)).keep
    question = "which queue does the invoice exporter use"

    assert [item.source for item in ours.store.search(question, limit=5, timeout=5)] == ["memsift:decision"]
    assert theirs.store.search(question, limit=5, timeout=5) == []
    result = recall(Message(question, session="g1"), theirs, EVERY_MESSAGE_STAGES)
    assert result.items == () and "acme" not in result.text
