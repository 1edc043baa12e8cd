"""A reply as it is heard: Markdown never read as symbols, long visual blocks summarised, and
a streaming reply given sentence by sentence once each is complete."""

from __future__ import annotations

from threadline.voice.spoken import SpokenFeed, spoken_sentences

REPLY = """# Getting started

Install it with **pip**. Then run `threadline` and read [the guide](https://example.org/guide). It works!

```python
a = 1
b = 2
print(a + b)
```

| name | size |
|------|------|
| a    | 1    |
| b    | 2    |

- first, with $x^2$ inside
- second

$$
E = mc^2
$$

![a cat on a mat](cat.png)
"""

HEARD = [
    "Getting started.",
    "Install it with pip.",
    "Then run threadline and read the guide.",
    "It works!",
    "Python code block, 3 lines.",
    "Table, 2 rows.",
    "first, with formula inside.",
    "second.",
    "Formula.",
    "image: a cat on a mat.",
]


def test_markdown_is_heard_as_words_and_blocks_as_summaries() -> None:
    assert spoken_sentences(REPLY) == HEARD
    assert not any(symbol in " ".join(HEARD) for symbol in ("*", "`", "|", "#", "$", "](", "```"))


def test_a_code_block_without_a_language_and_one_line() -> None:
    assert spoken_sentences("Run this:\n\n```\nls -la\n```\n") == ["Run this:", "Code block, 1 line."]


def test_a_streaming_reply_gives_each_sentence_once_when_it_is_complete() -> None:
    feed = SpokenFeed()
    given: list[list[str]] = []
    for end in range(1, len(REPLY) + 1):
        new = feed.update(REPLY[:end])
        if new:
            given.append(new)
        so_far = [s for batch in given for s in batch]
        assert so_far == HEARD[: len(so_far)]  # in order, never said twice, never taken back
        if "```python" in REPLY[:end] and "print(a + b)\n```" not in REPLY[:end]:
            assert "Python code block" not in " ".join(so_far)  # not counted while still open
    given.append(feed.update(REPLY, final=True))
    assert [s for batch in given for s in batch] == HEARD


def test_an_unfinished_sentence_waits_for_its_end_or_the_reply_end() -> None:
    feed = SpokenFeed()
    assert feed.update("The first sentence is done. The second is still") == ["The first sentence is done."]
    assert feed.update("The first sentence is done. The second is still growing") == []
    assert feed.update("The first sentence is done. The second is still growing", final=True) == [
        "The second is still growing."
    ]
