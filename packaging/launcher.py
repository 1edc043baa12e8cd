"""Entry script for PyInstaller: the frozen ``threadline`` executable runs ``threadline.__main__.main``."""

import multiprocessing
import sys

from threadline.__main__ import main

if __name__ == "__main__":
    multiprocessing.freeze_support()
    sys.exit(main())
