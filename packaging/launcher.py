"""Entry script for PyInstaller: the frozen ``threadline`` executable runs ``threadline.__main__.main``,
or the local runtime's guard when started as one (``threadline/models/runtime_guard.py``: a frozen
build has no ``python -m``)."""

import multiprocessing
import sys

from threadline.models.runtime_guard import GUARD_FLAG

if __name__ == "__main__":
    multiprocessing.freeze_support()
    if sys.argv[1:2] == [GUARD_FLAG]:
        from threadline.models.runtime_guard import main as guard

        sys.exit(guard(sys.argv[2:]))
    from threadline.__main__ import main

    sys.exit(main())
