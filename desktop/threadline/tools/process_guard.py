"""Processes that tools start end with Threadline, even when Threadline is killed (docs/tools.md).

POSIX (Linux, macOS): a tool's process leads its own process group, and a
*watcher* rides along in that group: a background ``sh`` subshell blocked on
reading a channel whose other end only Threadline holds (the command's stdin
pipe for the shell tool; the stderr socket of an MCP server). Threadline never
writes to it, so the read returns only when Threadline's end closes: when it
stops the tool itself, or when the kernel closes every descriptor of a process
that died, ``kill -9`` included. The watcher then sends SIGKILL to its own
process group, which holds the command, its children and their children.

``PR_SET_PDEATHSIG`` is not used: it reaches only the direct child (it is
cleared on ``fork``, so a ``sh -c 'sleep 100 & sleep 100'`` leaves the first
``sleep`` behind), it fires when the *thread* that spawned the child exits, it
needs a ``preexec_fn`` (which the ``mcp`` SDK offers no hook for), and it does
not exist on macOS. The watcher covers all of that with one mechanism, and
being a member of the group it signals, the group id cannot be reused by
another program before the kill. What it cannot reach: a process that left the
group on purpose (``setsid``, a daemon).

Windows: the process is put in a job object with ``KILL_ON_JOB_CLOSE``; the
handle is Threadline's, so the job (the command and what it started later) ends
when Threadline's handles close, killed or not. The ``mcp`` SDK does the same
for the servers it starts.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

_WATCHER = (
    "exec 3<&{channel}\n"  # the channel from Threadline, kept where the watcher can read it
    "{{ read -r line <&3; kill -KILL 0; }} </dev/null >/dev/null 2>&1 &\n"
    "exec 3<&-\n"
    'exec "$@"{redirect}\n'
)
SHELL = "/bin/sh"


def guarded_argv(argv: Sequence[str], *, channel: int, stdin_to_null: bool = False) -> list[str]:
    """``argv`` started through ``sh`` with a watcher on descriptor ``channel`` (POSIX only).

    The command replaces the ``sh`` (``exec``), so it keeps the process id the caller
    sees, its exit code and its pipes; only the watcher is added to its group. With
    ``stdin_to_null`` the command reads ``/dev/null`` (the channel is its stdin).
    """
    script = _WATCHER.format(channel=channel, redirect=" </dev/null" if stdin_to_null else "")
    return [SHELL, "-c", script, "threadline-guard", *argv]


if sys.platform == "win32":  # pragma: no cover  (not testable on the Linux CI)
    import ctypes
    from ctypes import wintypes

    _EXTENDED_LIMITS_CLASS = 9  # JobObjectExtendedLimitInformation
    _JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE = 0x2000
    _PROCESS_SET_QUOTA = 0x0100
    _PROCESS_TERMINATE = 0x0001

    class _IoCounters(ctypes.Structure):
        _fields_ = [(name, ctypes.c_ulonglong) for name in ("r", "w", "o", "rb", "wb", "ob")]

    class _BasicLimits(ctypes.Structure):
        _fields_ = [
            ("PerProcessUserTimeLimit", ctypes.c_longlong),
            ("PerJobUserTimeLimit", ctypes.c_longlong),
            ("LimitFlags", wintypes.DWORD),
            ("MinimumWorkingSetSize", ctypes.c_size_t),
            ("MaximumWorkingSetSize", ctypes.c_size_t),
            ("ActiveProcessLimit", wintypes.DWORD),
            ("Affinity", ctypes.c_size_t),
            ("PriorityClass", wintypes.DWORD),
            ("SchedulingClass", wintypes.DWORD),
        ]

    class _ExtendedLimits(ctypes.Structure):
        _fields_ = [
            ("BasicLimitInformation", _BasicLimits),
            ("IoInfo", _IoCounters),
            ("ProcessMemoryLimit", ctypes.c_size_t),
            ("JobMemoryLimit", ctypes.c_size_t),
            ("PeakProcessMemoryUsed", ctypes.c_size_t),
            ("PeakJobMemoryUsed", ctypes.c_size_t),
        ]

    def _kernel32() -> ctypes.WinDLL:
        """kernel32 with the prototypes used here (a HANDLE is pointer-sized: the default
        ``int`` result would cut it on 64-bit Windows)."""
        kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)
        kernel32.CreateJobObjectW.argtypes = (wintypes.LPVOID, wintypes.LPCWSTR)
        kernel32.CreateJobObjectW.restype = wintypes.HANDLE
        kernel32.OpenProcess.argtypes = (wintypes.DWORD, wintypes.BOOL, wintypes.DWORD)
        kernel32.OpenProcess.restype = wintypes.HANDLE
        kernel32.SetInformationJobObject.argtypes = (
            wintypes.HANDLE,
            ctypes.c_int,
            wintypes.LPVOID,
            wintypes.DWORD,
        )
        kernel32.SetInformationJobObject.restype = wintypes.BOOL
        kernel32.AssignProcessToJobObject.argtypes = (wintypes.HANDLE, wintypes.HANDLE)
        kernel32.AssignProcessToJobObject.restype = wintypes.BOOL
        kernel32.CloseHandle.argtypes = (wintypes.HANDLE,)
        kernel32.CloseHandle.restype = wintypes.BOOL
        return kernel32

    def kill_on_close_job(pid: int) -> int | None:
        """A job holding process ``pid`` that kills it (and what it starts) when its handle closes.

        Returns the job handle, to close with ``close_job`` (``None`` if Windows refused).
        Processes the command started before it joined the job (microseconds) are outside.
        """
        kernel32 = _kernel32()
        job = kernel32.CreateJobObjectW(None, None)
        if not job:
            return None
        limits = _ExtendedLimits()
        limits.BasicLimitInformation.LimitFlags = _JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
        process = kernel32.OpenProcess(_PROCESS_SET_QUOTA | _PROCESS_TERMINATE, False, pid)
        try:
            if (
                process
                and kernel32.SetInformationJobObject(
                    job, _EXTENDED_LIMITS_CLASS, ctypes.byref(limits), ctypes.sizeof(limits)
                )
                and kernel32.AssignProcessToJobObject(job, process)
            ):
                return int(job)
        finally:
            if process:
                kernel32.CloseHandle(process)
        kernel32.CloseHandle(job)
        return None

    def close_job(job: int | None) -> None:
        """Close the job: whatever is still in it is killed."""
        if job:
            _kernel32().CloseHandle(job)
