"""The voice in the window: replies read aloud and the reading bar, Settings → Voice (docs/voice.md)."""
