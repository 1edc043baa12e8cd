"""``threadline models``: search the Hub for GGUF models, download, import, list, remove; the runtime.

``pull`` shows progress on standard error (a line redrawn on a terminal, a line every few
seconds otherwise) and resumes a partial download of the same file left by an earlier run
(docs/local-models.md, "Downloads"); Ctrl+C keeps the part for the next ``pull``.

Only ``argparse`` is imported at module level: the parser is built on every start.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from threadline.engine.api import EngineApi
    from threadline.models.download import DownloadJob


def add_models_parser(commands: Any, common: argparse.ArgumentParser) -> None:
    parser = commands.add_parser(
        "models", parents=[common], help="local GGUF models: search the Hub, download, import, list, remove"
    )
    actions = parser.add_subparsers(dest="models_command", metavar="ACTION", required=True)
    search = actions.add_parser("search", parents=[common], help="find GGUF models on the Hugging Face Hub")
    search.add_argument("text")
    files = actions.add_parser("files", parents=[common], help="a model's GGUF files, their size and fit")
    files.add_argument("repo")
    files.add_argument("--context", type=int, default=8192, metavar="TOKENS", help="context length (8192)")
    pull = actions.add_parser(
        "pull", parents=[common], help="download a GGUF file (resumes a partial download of the same file)"
    )
    pull.add_argument("repo", help="the Hub repository, such as Qwen/Qwen2.5-0.5B-Instruct-GGUF")
    pull.add_argument("--file", required=True, metavar="NAME.gguf", help="which file (see `models files`)")
    imp = actions.add_parser(
        "import", parents=[common], help="add a .gguf file you have to the models folder"
    )
    imp.add_argument("file", type=Path)
    listing = actions.add_parser("list", parents=[common], help="the models in the models folder")
    listing.add_argument("--json", action="store_true", help="print JSON (for scripts)")
    rm = actions.add_parser("rm", parents=[common], help="delete a model from the models folder")
    rm.add_argument("name")
    runtime = actions.add_parser(
        "runtime", parents=[common], help="the local runtime: its settings, what it serves, its log; stop it"
    )
    runtime.add_argument("--context", type=int, metavar="TOKENS", help="context size models load with")
    runtime.add_argument("--gpu-layers", type=int, metavar="N", help="layers put on the GPU (0: none)")
    runtime.add_argument("--idle", type=float, metavar="MINUTES", help="unload after this long unused")
    runtime.add_argument(
        "--server", metavar="PATH", help="a llama-server program to run ('' for threadline[local])"
    )
    runtime.add_argument("--stop", action="store_true", help="stop the runtime now")


async def run(engine: EngineApi, args: argparse.Namespace, out: TextIO | None = None) -> int:
    out = out or sys.stdout  # looked up now: a default bound at import keeps a stream replaced since
    action = args.models_command
    models = engine.models
    if action == "search":
        found = await models.search(args.text)
        if not found:
            out.write(f"No GGUF model on {models.endpoint} matches {args.text!r}.\n")
        for hit in found:
            out.write(f"{hit.repo}\t{hit.downloads:,} downloads\n")
        return 0
    if action == "files":
        from threadline.models.fit import human_size

        for choice in await models.files(args.repo, args.context):
            f = choice.file
            mark = "  (downloaded)" if choice.installed else ""
            need = human_size(choice.fit.need_bytes)
            out.write(f"{f.name}\t{human_size(f.size)}\tneeds ≈{need}: {choice.fit.verdict.value}{mark}\n")
        return 0
    if action == "import":
        model = await models.import_file(args.file)
        out.write(f"Imported {model.name} ({model.info.architecture}) into {models.folder}\n")
        return 0
    if action == "list":
        installed = await models.installed()
        if args.json:
            out.write(json.dumps([m.as_json() for m in installed], indent=2, ensure_ascii=False) + "\n")
            return 0
        from threadline.models.fit import human_size

        if not installed:
            out.write(f"No models in {models.folder} yet (`threadline models search TEXT`).\n")
        for m in installed:
            window = f"{m.info.context_length:,} tokens" if m.info.context_length else "context unknown"
            out.write(f"{m.name}\t{human_size(m.size)}\t{m.info.architecture}\t{window}\n")
        return 0
    if action == "runtime":
        return await _runtime(engine, args, out)
    if action == "rm":
        await models.remove(args.name)
        out.write(f"Deleted {args.name}\n")
        return 0
    return await _pull(engine, args.repo, args.file, out)


async def _pull(engine: EngineApi, repo: str, name: str, out: TextIO) -> int:
    from threadline.models.download import State
    from threadline.models.errors import ModelError
    from threadline.models.fit import human_size

    job = await engine.models.pull(repo, name)
    if job.done:
        sys.stderr.write(f"Resuming {name} from {human_size(job.done)}\n")
    progress = _Progress(sys.stderr)
    unsubscribe = engine.models.subscribe(progress.show)
    try:
        await engine.models.wait(job.id)
    except (KeyboardInterrupt, asyncio.CancelledError):
        engine.models.pause(job.id)
        raise
    finally:
        unsubscribe()
        progress.end()
    if job.state is State.DONE and job.model is not None:
        out.write(f"{job.model.name} is ready in {engine.models.folder} (SHA-256 checked)\n")
        return 0
    raise ModelError(job.message or f"The download of {name} stopped.")


async def _runtime(engine: EngineApi, args: argparse.Namespace, out: TextIO) -> int:
    from dataclasses import replace

    models = engine.models
    settings = models.runtime_settings()
    changes = {
        "context": args.context,
        "gpu_layers": args.gpu_layers,
        "idle_minutes": args.idle,
        "server_binary": args.server,
    }
    changed = {k: v for k, v in changes.items() if v is not None}
    if changed:
        settings = replace(settings, **changed)
        models.set_runtime_settings(settings)
    if args.stop:
        await models.stop_runtime()
    status = await models.runtime_status()
    from threadline.models.runtime import NO_RUNTIME_IN_BUILD, is_packaged

    frozen = is_packaged()  # a packaged build: the runtime is in it or not at all
    where = "in this build" if frozen else "threadline[local]"
    runner = settings.server_binary or f"llama-cpp-python ({where})"
    if not models.runtime_installed():
        runner = (
            f"nothing - {NO_RUNTIME_IN_BUILD} with --server PATH" if frozen else f"{runner} - not installed"
        )
    out.write(f"Runs: {runner}\n")
    out.write(f"Context: {settings.context:,} tokens, GPU layers: {settings.gpu_layers}, ")
    out.write(f"unloads after {settings.idle_minutes:g} min unused\n")
    if status is None:
        out.write("Not running\n")
    else:
        out.write(f"Serving {status['model']} on 127.0.0.1:{status['port']} (pid {status['pid']})\n")
    out.write(f"Log: {models.runtime_log}\n")
    return 0


class _Progress:
    """One line of progress: redrawn on a terminal, printed every few seconds into a file."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.tty = stream.isatty()
        self.last = 0.0
        self.drawn = False

    def show(self, job: DownloadJob) -> None:
        from threadline.models.fit import human_size

        now = time.monotonic()
        if now - self.last < (0.2 if self.tty else 5.0) or job.state.value != "downloading" or not job.done:
            return
        self.last = now
        total = f" of {human_size(job.total)}" if job.total else ""
        pct = f" {100 * job.done / job.total:.0f}%" if job.total else ""
        speed = f", {human_size(job.speed)}/s" if job.speed else ""
        left = f", {_eta(job.eta)} left" if job.eta is not None else ""
        line = f"{job.file.name}: {human_size(job.done)}{total}{pct}{speed}{left}"
        if job.message:
            line += f" ({job.message})"
        if self.tty:
            self.stream.write("\r\x1b[K" + line)
            self.drawn = True
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def end(self) -> None:
        if self.drawn:
            self.stream.write("\n")
            self.stream.flush()


def _eta(seconds: float) -> str:
    s = int(seconds)
    if s >= 3600:
        return f"{s // 3600} h {s % 3600 // 60:02d} min"
    if s >= 60:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s} s"
