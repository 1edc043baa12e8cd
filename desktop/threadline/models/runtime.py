"""The managed runtime: llama.cpp's OpenAI-compatible server as a child process.

One runtime per computer (per data folder), shared by every Threadline process: its pid,
port and model are in ``runtime/state.json``; a file lock (``runtime/lock``) makes start,
swap and stop one at a time across processes; the key the starting process made for it is
handed over in an owner-only file (docs/local-models.md, "The runtime", says why that file
and where it lives). Each process using it holds a lease (``models/runtime_leases.py``),
and a guard process (``models/runtime_guard.py``) stops it when none is held any more, so a
killed Threadline does not leave a model in memory. The server binds 127.0.0.1 on a free
port and answers only requests with that key. Calls here block (a start waits for the
model to load); the engine runs them in threads.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from threadline.files.os_lock import lock, try_lock, unlock
from threadline.files.private import create_private_file, open_private, private_folder
from threadline.models.errors import ModelError
from threadline.models.fit import Verdict, estimate, human_size
from threadline.models.library import InstalledModel
from threadline.models.machine import Machine, detect
from threadline.models.runtime_entry import RUN_LOCAL_RUNTIME
from threadline.models.runtime_guard import guard_command
from threadline.models.runtime_leases import KEY_FILE as KEY_FILE
from threadline.models.runtime_leases import LOCK_FILE as LOCK_FILE
from threadline.models.runtime_leases import STATE_FILE as STATE_FILE
from threadline.models.runtime_leases import Lease, holders

log = logging.getLogger("threadline.models.runtime")
USED_FILE = "used"
LOG_FILE = "runtime.log"
LOAD_TIMEOUT = 300.0
"""Seconds a model may take to load before the start is given up (big files on slow disks)."""


class RuntimeUnavailable(ModelError):
    """Neither ``llama-cpp-python``'s server nor a ``llama-server`` binary is there to run."""


class ModelTooBig(ModelError):
    """The model would not fit this computer's memory at the chosen context; refused before loading."""


class LoadFailed(ModelError):
    """The runtime stopped or gave up while loading the model (not GGUF it can read, an unknown
    architecture, a broken file)."""


@dataclass(frozen=True)
class RuntimeSettings:
    """What the person chose (the Models page, ``threadline models runtime``)."""

    context: int = 8192
    gpu_layers: int = 0
    idle_minutes: float = 15.0
    server_binary: str = ""
    """A ``llama-server`` binary to run instead of ``llama-cpp-python``'s server ("" = that one)."""

    @classmethod
    def from_json(cls, data: Any) -> RuntimeSettings:
        if not isinstance(data, dict):
            return cls()
        default = cls()
        return cls(
            context=_positive_int(data.get("context"), default.context),
            gpu_layers=_positive_int(data.get("gpu_layers"), default.gpu_layers, allow_zero=True),
            idle_minutes=float(data["idle_minutes"])
            if isinstance(data.get("idle_minutes"), int | float) and data["idle_minutes"] > 0
            else default.idle_minutes,
            server_binary=str(data.get("server_binary") or ""),
        )

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


def _positive_int(value: Any, default: int, *, allow_zero: bool = False) -> int:
    if isinstance(value, int) and not isinstance(value, bool) and (value > 0 or (allow_zero and value == 0)):
        return value
    return default


@dataclass(frozen=True)
class Endpoint:
    """Where the running server answers, and the key it wants (never logged, never in the state file)."""

    base_url: str
    api_key: str
    model: str
    pid: int


def server_command(
    settings: RuntimeSettings, model: InstalledModel, port: int
) -> tuple[list[str], str] | None:
    """The command that serves ``model`` on ``port``, and the environment variable for its key.

    ``None`` when there is nothing to run. The key goes through the environment, never the
    command line: any user on the machine can read a process's arguments, only its owner
    its environment.
    """
    if settings.server_binary:
        binary = shutil.which(settings.server_binary) or settings.server_binary
        if not Path(binary).is_file():
            raise RuntimeUnavailable(
                f"The llama-server program set for local models was not found: {settings.server_binary}. "
                "Choose it again on the Models page."
            )
        command = [binary, "-m", str(model.path), "--host", "127.0.0.1", "--port", str(port)]
        command += ["-c", str(settings.context), "-ngl", str(settings.gpu_layers), "--alias", model.name]
        return [*command, "--jinja"], "LLAMA_API_KEY"
    if not llama_cpp_installed():
        return None
    command = [*_llama_cpp_server(), "--model", str(model.path)]
    command += ["--host", "127.0.0.1", "--port", str(port), "--model_alias", model.name]
    command += ["--n_ctx", str(settings.context), "--n_gpu_layers", str(settings.gpu_layers)]
    return command, "API_KEY"


def _llama_cpp_server() -> list[str]:
    """How to start ``llama_cpp.server``: ``python -m`` from a Python environment; in a frozen
    build (where ``sys.executable`` is the ``threadline`` program) its hidden entry."""
    if getattr(sys, "frozen", False):
        return [sys.executable, RUN_LOCAL_RUNTIME]
    return [sys.executable, "-m", "llama_cpp.server"]


def llama_cpp_installed() -> bool:
    """Whether ``llama-cpp-python`` with its server is importable (without importing it: it loads
    the compiled library)."""
    import importlib.util

    return all(importlib.util.find_spec(m) is not None for m in ("llama_cpp", "uvicorn", "fastapi"))


def is_packaged() -> bool:
    """A frozen (packaged) build: the runtime is in it or not at all, and pip cannot add it."""
    return bool(getattr(sys, "frozen", False))


NO_RUNTIME_IN_BUILD = "this build has no local runtime; choose a llama-server program"
"""What a packaged build without the runtime says in place of the pip advice a package user
cannot follow; ``threadline models runtime`` ends it "with --server PATH", the Models page
"below" (docs/local-models.md, "Packaging")."""

NOT_INSTALLED = (
    "Chatting with a downloaded model needs the local runtime, which this installation does not have. "
    "Install it with: pip install 'threadline[local]' (it compiles llama.cpp, a few minutes), "
    "or choose a llama-server program on the Models page. The Linux packages include it."
)


def not_installed() -> str:
    """What the first message to a local model says when nothing can run it: pip advice where pip
    can add the runtime, the packaged build's own words where it cannot."""
    if is_packaged():
        return (
            f"Chatting with a downloaded model needs a runtime, but {NO_RUNTIME_IN_BUILD} on the Models page."
        )
    return NOT_INSTALLED


class LocalRuntime:
    """Starts, shares, swaps and stops the one runtime of a data folder."""

    def __init__(
        self,
        state_dir: Path,
        *,
        machine: Callable[[], Machine] = detect,
        key_dir: Path | None = None,
    ) -> None:
        self.state_dir = state_dir
        self._machine = machine
        self._key_dir = key_dir or _key_dir(state_dir)
        self._lock = threading.RLock()
        self._child: subprocess.Popen[bytes] | None = None
        """The guard (``models/runtime_guard.py``) of the runtime this process started."""
        self._server_pid = 0
        """Its server's pid, what ``Endpoint.pid`` and the state name."""
        self._lease: Lease | None = None
        """Held from this process's first use of the runtime until ``close``."""
        self._idle_minutes = RuntimeSettings().idle_minutes
        self._watch_stop = threading.Event()
        self._watcher: threading.Thread | None = None
        self._in_use = 0
        """Replies streaming in this process: while any does, the watcher keeps the runtime marked used."""
        self.on_stopped: Callable[[str], None] | None = None
        """Called (on a watcher thread) with the model's name when idleness stopped it."""

    @property
    def log_path(self) -> Path:
        return self.state_dir / LOG_FILE

    # -- the shared state -----------------------------------------------------------------
    @contextlib.contextmanager
    def _exclusive(self) -> Any:
        private_folder(self.state_dir)
        create_private_file(self.state_dir / LOCK_FILE)  # the data folder is the user's alone
        with self._lock, open(self.state_dir / LOCK_FILE, "a+b") as handle:
            lock(handle)
            try:
                yield
            finally:
                unlock(handle)

    def _read_state(self) -> dict[str, Any] | None:
        try:
            data = json.loads((self.state_dir / STATE_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) and isinstance(data.get("pid"), int) else None

    def _write_state(self, state: dict[str, Any], key: str) -> None:
        self._key_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        key_path = self._key_dir / KEY_FILE
        with contextlib.suppress(FileNotFoundError):
            key_path.unlink()
        fd = os.open(key_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(key)
        tmp = self.state_dir / (STATE_FILE + ".tmp")
        with open_private(tmp, "w", encoding="utf-8") as out:
            out.write(json.dumps(state))
        os.replace(tmp, self.state_dir / STATE_FILE)

    def _clear_state(self) -> None:
        for path in (self.state_dir / STATE_FILE, self._key_dir / KEY_FILE):
            with contextlib.suppress(FileNotFoundError):
                path.unlink()

    def _endpoint(self, state: dict[str, Any]) -> Endpoint | None:
        try:
            key = (self._key_dir / KEY_FILE).read_text(encoding="utf-8").strip()
        except OSError:
            return None
        return Endpoint(
            f"http://127.0.0.1:{state['port']}/v1", key, str(state.get("model", "")), state["pid"]
        )

    def touch(self) -> None:
        """Mark the runtime as used now (any process's use keeps it loaded)."""
        with contextlib.suppress(OSError):
            (self.state_dir / USED_FILE).touch()

    @contextlib.contextmanager
    def in_use(self) -> Any:
        """Around one reply: a reply longer than the idle time does not see its runtime unloaded."""
        self._in_use += 1
        self.touch()
        try:
            yield
        finally:
            self._in_use -= 1
            self.touch()

    def _idle_for(self) -> float:
        try:
            return time.time() - (self.state_dir / USED_FILE).stat().st_mtime
        except OSError:
            return 0.0

    # -- what the engine asks -------------------------------------------------------------
    def status(self) -> dict[str, Any] | None:
        """The running runtime's model, pid and port, or ``None`` when none answers."""
        with self._exclusive():
            state = self._read_state()
            if state is None:
                return None
            endpoint = self._endpoint(state)
            if endpoint is None or not self._answers(endpoint):
                return None
            return {"model": state.get("model"), "pid": state["pid"], "port": state["port"]}

    def alive(self, endpoint: Endpoint, grace: float = 0.0) -> bool:
        """Whether the runtime behind ``endpoint`` still runs (a failed turn asks: crash or not).

        ``grace``: seconds to wait for our child to be seen gone; a killed process closes its
        sockets a moment before it can be reaped, so a cut stream may arrive first.
        """
        child = self._child
        if child is not None and self._server_pid == endpoint.pid:
            deadline = time.monotonic() + grace
            while child.poll() is None:
                if time.monotonic() >= deadline:
                    return True
                time.sleep(0.02)
            return False
        return self._answers(endpoint)

    def ensure(
        self, model: InstalledModel, settings: RuntimeSettings, on_start: Callable[[], None] | None = None
    ) -> Endpoint:
        """The runtime serving ``model`` with ``settings``: the running one, or one started now.

        A runtime serving another model (or this one with other settings) is stopped first:
        one model in memory at a time. Raises ``ModelTooBig`` before loading a model this
        computer cannot hold, ``RuntimeUnavailable`` when nothing can run it and
        ``LoadFailed`` when the runtime could not load it. ``on_start`` is called (on this
        thread) just before a runtime is started, so a chat can say the model is loading.
        """
        self._idle_minutes = settings.idle_minutes
        with self._exclusive():
            if self._lease is None:  # under the lock: the guard never counts the leases in between
                self._lease = Lease.take(self.state_dir)
            state = self._read_state()
            wanted = {"path": str(model.path), "context": settings.context, "gpu_layers": settings.gpu_layers}
            if state is not None:
                endpoint = self._endpoint(state)
                same = all(state.get(k) == v for k, v in wanted.items())
                if same and endpoint is not None and self.alive(endpoint):
                    self.touch()
                    self._watch()
                    return endpoint
                self._stop(state)
            self._check_memory(model, settings)
            if on_start is not None:
                on_start()
            endpoint = self._start(model, settings)
            self._write_state(
                {**wanted, "model": model.name, "pid": endpoint.pid, "port": _port(endpoint)},
                endpoint.api_key,
            )
            self.touch()
            self._watch()
            return endpoint

    def stop(self) -> None:
        """Stop the runtime, whoever uses it (the Models page's Stop); the next message starts it."""
        self._watch_stop.set()
        with self._exclusive():
            state = self._read_state()
            if state is not None:
                self._stop(state)

    def close(self) -> None:
        """As this process closes: its lease goes, and the runtime stops if no other live process
        holds one (``ask`` leaves no model in memory); one that does keeps it running."""
        self._watch_stop.set()
        if self._lease is None:
            return
        with self._exclusive():
            lease, self._lease = self._lease, None
            lease.release()
            state = self._read_state()
            if state is not None and not holders(self.state_dir):
                self._stop(state)
        self._reap()

    def stop_orphan(self) -> bool:
        """Stop a runtime no live process holds a lease on (left by a Threadline before leases,
        or whose guard was killed); ``True`` when one was stopped. Skipped while another process
        starts or stops one (its lock is held)."""
        if not (self.state_dir / STATE_FILE).exists():
            return False
        with self._lock, open(self.state_dir / LOCK_FILE, "a+b") as handle:
            if not try_lock(handle):
                return False
            try:
                state = self._read_state()
                if state is None or holders(self.state_dir):
                    return False
                self._stop(state)
                return True
            finally:
                unlock(handle)

    def stop_orphan_soon(self) -> None:
        """At start: ``stop_orphan`` on a thread, when a state is there at all (a stat otherwise)."""
        if (self.state_dir / STATE_FILE).exists():
            threading.Thread(target=self._stop_orphan_quietly, name="runtime-orphan", daemon=True).start()

    def _stop_orphan_quietly(self) -> None:
        try:
            if self.stop_orphan():
                log.info("stopped a local runtime no Threadline used any more")
        except OSError as err:
            log.warning("could not look for a local runtime left running: %s", err)

    def _reap(self) -> None:
        """Wait for our guard when it is ending anyway (the server gone): no zombie is left."""
        child = self._child
        if child is not None and not _pid_exists(self._server_pid):
            with contextlib.suppress(subprocess.TimeoutExpired):
                child.wait(10)

    # -- start and stop -------------------------------------------------------------------
    def _check_memory(self, model: InstalledModel, settings: RuntimeSettings) -> None:
        fit = estimate(
            model.size, model.name, settings.context, self._machine(), model.info.kv_bytes_per_token()
        )
        if fit.verdict is Verdict.TOO_BIG:
            total = self._machine().total_ram or 0
            raise ModelTooBig(
                f"{model.name} needs about {human_size(fit.need_bytes)} of memory with a context of "
                f"{settings.context:,} tokens, and this computer has {human_size(total)}. "
                "Choose a shorter context on the Models page, or a smaller file."
            )

    def _start(self, model: InstalledModel, settings: RuntimeSettings) -> Endpoint:
        port = _free_port()
        made = server_command(settings, model, port)
        if made is None:
            raise RuntimeUnavailable(not_installed())
        command, key_variable = made
        key = secrets.token_urlsafe(32)
        # llama_cpp.server lets HOST, PORT and CONFIG_FILE in the environment override its
        # arguments: a HOST=0.0.0.0 left in the person's shell must not open the model to the network.
        env = {k: v for k, v in os.environ.items() if k not in ("CONFIG_FILE", "API_KEY", "LLAMA_API_KEY")}
        env.update({key_variable: key, "HOST": "127.0.0.1", "PORT": str(port)})
        private_folder(self.state_dir)
        if self.log_path.exists():
            os.replace(self.log_path, self.log_path.with_name(LOG_FILE + ".1"))
        create_private_file(self.log_path)
        with open(self.log_path, "wb") as log:
            log.write(
                f"Serving {model.name} on 127.0.0.1:{port} (context {settings.context}, "
                f"GPU layers {settings.gpu_layers})\n".encode()
            )
            log.flush()
            child, server_pid = self._start_guarded(command, env, log)
        endpoint = Endpoint(f"http://127.0.0.1:{port}/v1", key, model.name, server_pid)
        deadline = time.monotonic() + LOAD_TIMEOUT
        while time.monotonic() < deadline:
            if child.poll() is not None:
                raise LoadFailed(
                    f"The local runtime could not load {model.name}: {self._log_reason()} "
                    f"The runtime's log is {self.log_path}."
                )
            if self._answers(endpoint):
                return endpoint
            time.sleep(0.1)
        self._kill(server_pid)
        raise LoadFailed(
            f"The local runtime did not finish loading {model.name} within {LOAD_TIMEOUT:.0f} s, so it was "
            f"stopped. Its log is {self.log_path}."
        )

    def _start_guarded(
        self, command: list[str], env: dict[str, str], log: Any
    ) -> tuple[subprocess.Popen[bytes], int]:
        """The guard running ``command`` (``models/runtime_guard.py``), and the server's pid.

        The guard is in a session of its own (a process group on Windows): it outlives this
        process while another uses the runtime, and a Ctrl+C in this one's terminal is not its.
        """
        import threadline

        root = str(Path(threadline.__file__).resolve().parent.parent)  # the guard imports it too
        env = {**env, "PYTHONPATH": os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)}
        guard_argv = guard_command(self.state_dir, self._key_dir, command)
        if sys.platform == "win32":
            child = subprocess.Popen(
                guard_argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=log,
                env=env,
                creationflags=subprocess.CREATE_NEW_PROCESS_GROUP,
            )
        else:
            child = subprocess.Popen(
                guard_argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=log,
                env=env,
                start_new_session=True,
            )
        self._child = child
        assert child.stdout is not None
        with child.stdout:
            first = child.stdout.readline()  # the guard's first line; nothing when it could not start
        self._server_pid = int(first) if first.strip().isdigit() else -1
        return child, self._server_pid

    def _log_reason(self) -> str:
        """The runtime's last error line, for the message (the key is in its environment, never its log)."""
        try:
            lines = self.log_path.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            return "it stopped."
        for line in reversed(lines):
            text = line.strip()
            if any(w in text.lower() for w in ("error", "failed", "unknown", "invalid", "exception")):
                return text[:300].rstrip(".") + "."
        return "it stopped while loading."

    def _stop(self, state: dict[str, Any]) -> None:
        pid = state["pid"]
        endpoint = self._endpoint(state)
        own = self._child is not None and self._server_pid == pid
        if own or (endpoint is not None and self._answers(endpoint)):
            self._kill(pid)
        self._clear_state()

    def _kill(self, pid: int) -> None:
        """End the server ``pid``; when this process's guard runs it, the guard ends with it and
        is reaped (a guard that never named its server is ended itself)."""
        child = self._child if self._child is not None and self._server_pid == pid else None
        if pid > 0:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGTERM)
        elif child is not None:
            child.terminate()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if child is not None:
                if child.poll() is not None:
                    break
            elif pid <= 0 or not _pid_exists(pid):
                break
            time.sleep(0.05)
        else:
            if pid > 0:
                with contextlib.suppress(OSError):
                    os.kill(pid, getattr(signal, "SIGKILL", signal.SIGTERM))
            if child is not None:
                child.kill()
                child.wait(10)
        if child is not None:
            self._child = None
            self._server_pid = 0

    def _answers(self, endpoint: Endpoint) -> bool:
        from threadline.models.download import httpx_module

        httpx = httpx_module()
        try:
            with httpx.Client(timeout=3.0, trust_env=False) as client:
                response = client.get(
                    endpoint.base_url + "/models", headers={"Authorization": f"Bearer {endpoint.api_key}"}
                )
        except Exception:  # refused, reset, timed out: not answering (yet)
            return False
        return bool(response.status_code == 200)

    # -- idle -----------------------------------------------------------------------------
    def _watch(self) -> None:
        if self._watcher is not None and self._watcher.is_alive():
            return
        self._watch_stop = threading.Event()
        self._watcher = threading.Thread(target=self._watch_idle, name="runtime-idle", daemon=True)
        self._watcher.start()

    def _watch_idle(self) -> None:
        stop = self._watch_stop
        while not stop.wait(min(5.0, self._idle_minutes * 60 / 4)):
            if self._in_use:
                self.touch()
                continue
            if self._idle_for() < self._idle_minutes * 60:
                continue
            with self._exclusive():
                state = self._read_state()
                if state is None:
                    return
                if self._idle_for() < self._idle_minutes * 60:
                    continue
                self._stop(state)
            if self.on_stopped is not None:
                self.on_stopped(str(state.get("model", "")))
            return


def _port(endpoint: Endpoint) -> int:
    return int(endpoint.base_url.rsplit(":", 1)[1].split("/", 1)[0])


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _pid_exists(pid: int) -> bool:
    if sys.platform == "win32":  # os.kill(pid, 0) would send Ctrl+C there
        import ctypes

        kernel32 = ctypes.windll.kernel32
        handle = kernel32.OpenProcess(0x1000, False, pid)  # PROCESS_QUERY_LIMITED_INFORMATION
        if not handle:
            return False
        code = ctypes.c_ulong()
        ok = kernel32.GetExitCodeProcess(handle, ctypes.byref(code))
        kernel32.CloseHandle(handle)
        return bool(ok) and code.value == 259  # STILL_ACTIVE
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _key_dir(state_dir: Path) -> Path:
    """Where the key is handed over: the user's runtime folder (a tmpfs only they can enter) when
    there is one, else the data folder (docs/local-models.md, "The runtime")."""
    runtime_dir = os.environ.get("XDG_RUNTIME_DIR")
    if runtime_dir and Path(runtime_dir).is_dir():
        import hashlib

        tag = hashlib.sha256(str(state_dir.resolve()).encode()).hexdigest()[:12]
        return Path(runtime_dir) / f"threadline-{tag}"
    return state_dir / "key"
