"""The real Claude Code and Codex CLIs, from the npm registry at pinned versions.

``install_agents`` installs both into
``<repo>/.cache/agents-claude-code-<version>-codex-<version>/`` (about 800 MB,
20 s to a few minutes), once; later runs reuse the folder. Without npm it
skips the calling test, and says why.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from attrs import frozen

# Checked on this machine (Node 20): newer releases move hooks and trust rules.
CLAUDE_CODE = "2.1.332"
CODEX = "0.171.0"
CACHE = Path(__file__).resolve().parents[2] / ".cache" / f"agents-claude-code-{CLAUDE_CODE}-codex-{CODEX}"


@frozen
class Agents:
    folder: Path

    @property
    def claude(self) -> Path:
        return self.folder / "node_modules" / ".bin" / "claude"

    @property
    def codex(self) -> Path:
        return self.folder / "node_modules" / ".bin" / "codex"

    def ready(self) -> bool:
        return self.claude.exists() and self.codex.exists()


def install_agents(folder: Path) -> Agents:
    """Both CLIs in *folder*, installed by npm unless they already are."""
    agents = Agents(folder)
    if agents.ready():
        return agents
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip("npm is not installed: the end-to-end tests install Claude Code and Codex with it")
    partial = folder.with_name(folder.name + ".partial")  # renamed when complete: a cut install is redone
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    # Claude Code's install script links its native binary in place of a stub: scripts must run.
    subprocess.run([npm, "install", "--prefix", str(partial), "--no-audit", "--no-fund", "--loglevel=error",
                    f"@anthropic-ai/claude-code@{CLAUDE_CODE}", f"@openai/codex@{CODEX}"],
                   check=True, timeout=1800, stdin=subprocess.DEVNULL)
    installed = Agents(partial)
    for binary, version in ((installed.claude, CLAUDE_CODE), (installed.codex, CODEX)):
        said = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=60,
                              stdin=subprocess.DEVNULL)
        if version not in said.stdout:  # e.g. Claude Code's stub, whose install script did not run
            raise RuntimeError(f"{binary} --version said {said.stdout!r} {said.stderr!r}, not {version}")
    partial.rename(folder)
    return agents
