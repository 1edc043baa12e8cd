"""How long a provider may take: to connect, to send its first byte, and between bytes later.

Three bounds, because they fail for different reasons:

* **connect** — opening the TCP (and TLS) connection. A cloud API or a local
  server answers this in milliseconds; 10 s means the host is unreachable.
* **first byte** — from sending the request until the first bytes of the reply's
  body arrive. This is where a model loads, a long prompt is read, or a server
  that accepted the connection hangs. Local servers loading a big model take
  tens of seconds, so the default is 60 s; each provider can set its own.
* **stall** — the longest silence between bytes once the reply is streaming. A
  reasoning model can think quietly for a while mid-reply, so this is longer
  (120 s), and never shorter than the first-byte bound.

Retries are bounded too: the wait before the user sees the first words, all
attempts and backoff together, is at most ``retry_budget`` (two first-byte
bounds), whatever the retry policy's attempt count says.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the command line's parser imports this module; configs load later
    from threadline.core.config import ProviderConfig

DEFAULT_CONNECT_TIMEOUT = 10.0
DEFAULT_FIRST_BYTE_TIMEOUT = 60.0
DEFAULT_STALL_TIMEOUT = 120.0

FIRST_BYTE_SETTING = "First reply within"
"""The label of the per-provider first-byte field in Settings → Providers (messages name it)."""
FIRST_BYTE_FLAG = "--timeout"
"""The ``threadline provider add`` option that sets the same value."""
CONNECT_SETTING = "Connect within"
CONNECT_FLAG = "--connect-timeout"


@dataclass(frozen=True, slots=True)
class Timeouts:
    """The three bounds of one provider, in seconds (see the module docstring)."""

    connect: float = DEFAULT_CONNECT_TIMEOUT
    first_byte: float = DEFAULT_FIRST_BYTE_TIMEOUT
    stall: float = DEFAULT_STALL_TIMEOUT

    @property
    def retry_budget(self) -> float:
        """Seconds from the first attempt until giving up when nothing has arrived yet."""
        return 2 * self.first_byte

    @classmethod
    def for_provider(
        cls, config: ProviderConfig, *, stall: float = DEFAULT_STALL_TIMEOUT, connect: float | None = None
    ) -> Timeouts:
        """The bounds for ``config``: its own values where set, else the app's defaults.

        ``stall`` is the app-wide silence bound; it also caps the default first-byte
        wait (a test or a caller that wants every wait short sets just this one).
        A provider's own first-byte value wins, and lengthens the stall bound with it.
        """
        first_byte = config.first_byte_timeout or min(DEFAULT_FIRST_BYTE_TIMEOUT, stall)
        return cls(
            connect=config.connect_timeout or connect or min(DEFAULT_CONNECT_TIMEOUT, stall),
            first_byte=first_byte,
            stall=max(stall, first_byte),
        )
