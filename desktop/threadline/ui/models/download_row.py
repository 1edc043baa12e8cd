"""One download on the Models page: progress, speed, time left, and Pause/Resume and Cancel."""

from __future__ import annotations

from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QPushButton, QVBoxLayout, QWidget

from threadline.models.download import DownloadJob, State
from threadline.models.fit import human_size


def eta_text(seconds: float) -> str:
    s = int(seconds)
    if s >= 3600:
        return f"{s // 3600} h {s % 3600 // 60:02d} min left"
    if s >= 60:
        return f"{s // 60} min {s % 60:02d} s left"
    return f"{s} s left"


def status_text(job: DownloadJob) -> str:
    """What the row says: the bytes, the speed and the time left, or why it stopped."""
    of = f"{human_size(job.done)} of {human_size(job.total)}" if job.total else human_size(job.done)
    if job.message:
        return f"{of} — {job.message}"
    if job.state is State.RUNNING:
        speed = f", {human_size(job.speed)}/s" if job.speed else ""
        left = f", {eta_text(job.eta)}" if job.eta is not None else ""
        return f"{of}{speed}{left}"
    if job.state is State.CHECKING:
        return "Checking the SHA-256…"
    if job.state is State.DONE:
        return "Downloaded and checked"
    return f"{of} — {job.state.value}"


class DownloadRow(QWidget):
    def __init__(self, job: DownloadJob, parent: QWidget) -> None:
        super().__init__(parent)
        self.job_id = job.id
        v = QVBoxLayout(self)
        v.setContentsMargins(0, 4, 0, 4)
        top = QHBoxLayout()
        self.name = QLabel(f"{job.file.name}  ({job.file.repo})", self)
        top.addWidget(self.name, 1)
        self.pause = QPushButton("Pause", self)
        self.pause.setAccessibleName(f"Pause {job.file.name}")
        self.cancel = QPushButton("Cancel", self)
        self.cancel.setAccessibleName(f"Cancel {job.file.name}")
        top.addWidget(self.pause)
        top.addWidget(self.cancel)
        v.addLayout(top)
        self.bar = QProgressBar(self)
        self.bar.setAccessibleName(f"Progress of {job.file.name}")
        self.bar.setRange(0, 1000)
        v.addWidget(self.bar)
        self.status = QLabel(self)
        self.status.setObjectName("Hint")
        self.status.setWordWrap(True)
        v.addWidget(self.status)
        self.update_from(job)

    def update_from(self, job: DownloadJob) -> None:
        self._show_progress(job)
        self.status.setText(status_text(job))
        paused = job.state in (State.PAUSED, State.FAILED)
        self.pause.setText("Resume" if paused else "Pause")
        self.pause.setAccessibleName(f"{self.pause.text()} {job.file.name}")
        self.pause.setEnabled(job.state is not State.CHECKING)
        done = job.state is State.DONE
        self.pause.setVisible(not done)  # two dead buttons stayed on a finished row; Clear takes it away
        self.cancel.setText("Clear" if done else "Cancel")
        self.cancel.setAccessibleName(f"{self.cancel.text()} {job.file.name}")

    def _show_progress(self, job: DownloadJob) -> None:
        """A moving bar where there is no share to show: a file whose size the Hub did not give
        (it stood at 0 % to the end), and the SHA-256 check (it stood at 100 % while it ran)."""
        unknown = job.state is State.RUNNING and not job.total
        if job.state is State.CHECKING or unknown:
            self.bar.setRange(0, 0)
            return
        self.bar.setRange(0, 1000)
        if job.state is State.DONE:
            self.bar.setValue(1000)
        else:
            self.bar.setValue(int(1000 * job.done / job.total) if job.total else 0)
