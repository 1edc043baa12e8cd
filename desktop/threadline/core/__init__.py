"""The pure conversation domain: messages, tree, turn state machine, request building.

No Qt, no SQL, no I/O: everything here is plain data and functions, so it can be
tested exhaustively and shared by the store, the providers and the engine.
"""
