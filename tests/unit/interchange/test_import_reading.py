"""Reading untrusted files: zips (split exports, images, bombs), encodings, damage and limits."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

from threadline.interchange.detect import ImportReader, read_file
from threadline.interchange.limits import ImportLimits
from threadline.interchange.model import ImportedConversation, ImportProblem

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "import"
PNG = bytes.fromhex("89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d49444154")


def chatgpt_conversation(number: int, text: str = "hello") -> dict[str, object]:
    return {
        "title": f"Chat {number}",
        "create_time": 1700000000 + number,
        "update_time": 1700000000 + number,
        "current_node": "a",
        "conversation_id": f"conv-{number}",
        "mapping": {
            "u": {
                "id": "u",
                "parent": None,
                "children": ["a"],
                "message": {
                    "id": "u",
                    "author": {"role": "user"},
                    "content": {
                        "content_type": "multimodal_text",
                        "parts": [
                            {
                                "content_type": "image_asset_pointer",
                                "asset_pointer": "file-service://file-Pic1",
                            },
                            text,
                        ],
                    },
                },
            },
            "a": {
                "id": "a",
                "parent": "u",
                "children": [],
                "message": {
                    "id": "a",
                    "author": {"role": "assistant"},
                    "content": {"content_type": "text", "parts": ["hi"]},
                },
            },
        },
    }


def conversations(items: list[ImportedConversation | ImportProblem]) -> list[ImportedConversation]:
    return [i for i in items if isinstance(i, ImportedConversation)]


def problems(items: list[ImportedConversation | ImportProblem]) -> list[ImportProblem]:
    return [i for i in items if isinstance(i, ImportProblem)]


def test_zip_with_split_files_takes_images_it_holds(tmp_path: Path) -> None:
    path = tmp_path / "export.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("conversations-001.json", json.dumps([chatgpt_conversation(3)]))
        archive.writestr(
            "conversations-000.json", json.dumps([chatgpt_conversation(1), chatgpt_conversation(2)])
        )
        archive.writestr("user.json", json.dumps({"id": "user-x", "email": "a@example.org"}))
        archive.writestr("message_feedback.json", "[]")
        archive.writestr("file-Pic1-photo.png", PNG)
        archive.writestr("chat.html", "<html></html>")
    items = read_file(path)
    assert problems(items) == []
    found = conversations(items)
    assert [c.title for c in found] == ["Chat 1", "Chat 2", "Chat 3"]  # split files in order
    image = found[0].messages[0].images[0]
    assert image.media_type == "image/png" and image.name == "file-Pic1-photo.png"
    assert "not included" not in found[0].messages[0].text


def test_zip_bomb_is_refused_by_what_inflates(tmp_path: Path) -> None:
    path = tmp_path / "bomb.zip"
    padding = " " * (50 * 1024 * 1024)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(
            "conversations.json", "[" + json.dumps(chatgpt_conversation(1)) + "," + padding + "]"
        )
    items = read_file(path)
    assert conversations(items)[0].title == "Chat 1"  # what came before the bomb is whole
    assert any("inflates more than" in p.reason for p in problems(items))


def test_total_inflated_size_is_bounded(tmp_path: Path) -> None:
    path = tmp_path / "many.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as archive:
        for n in range(4):
            archive.writestr(
                f"conversations-{n:03}.json", json.dumps([chatgpt_conversation(n, "x" * 400_000)])
            )
    items = read_file(path, ImportLimits(max_total_bytes=1_000_000))
    assert 1 <= len(conversations(items)) < 4
    assert any("inflates to more than" in p.reason for p in problems(items))


def test_bytes_that_are_not_utf8_fail_only_their_conversation(tmp_path: Path) -> None:
    good = json.dumps(chatgpt_conversation(1)).encode()
    bad = json.dumps(chatgpt_conversation(2, "caf\u00e9")).encode().replace(b"caf\\u00e9", b"caf\xe9")
    path = tmp_path / "latin1.json"
    path.write_bytes(b"[" + good + b"," + bad + b"," + good.replace(b"conv-1", b"conv-3") + b"]")
    items = read_file(path)
    assert [c.source_id for c in conversations(items)] == ["conv-1", "conv-3"]
    assert [p.reason for p in problems(items)] == ["It contains bytes that are not UTF-8 text."]


def test_cut_off_file_keeps_the_conversations_before_the_cut(tmp_path: Path) -> None:
    whole = json.dumps([chatgpt_conversation(1), chatgpt_conversation(2)])
    path = tmp_path / "cut.json"
    path.write_text(whole[: len(whole) - 40])
    items = read_file(path)
    assert [c.title for c in conversations(items)] == ["Chat 1"]
    assert problems(items)[0].reason == "The JSON is cut off or damaged after conversation 1."


def test_deep_nesting_and_large_conversations_are_problems(tmp_path: Path) -> None:
    deep = chatgpt_conversation(2)
    deep["extra"] = json.loads("[" * 300 + "]" * 300)
    path = tmp_path / "deep.json"
    path.write_text(json.dumps([chatgpt_conversation(1), deep, chatgpt_conversation(3, "y" * 5000)]))
    items = read_file(path, ImportLimits(max_conversation_bytes=4000))
    assert [c.title for c in conversations(items)] == ["Chat 1"]
    assert [p.reason for p in problems(items)] == [
        "It nests data more than 200 levels deep.",
        "It is larger than 1 MB.",
    ]


def test_unreadable_files_are_one_problem_naming_the_file(tmp_path: Path) -> None:
    empty = tmp_path / "empty.json"
    empty.write_bytes(b"")
    assert read_file(empty) == [ImportProblem("empty.json", "It is empty.")]
    damaged = tmp_path / "damaged.zip"
    damaged.write_bytes(b"PK\x03\x04 not really a zip")
    assert read_file(damaged) == [ImportProblem("damaged.zip", "It looks like a zip archive but is damaged.")]
    missing = read_file(tmp_path / "nowhere.json")
    assert missing[0].title == "nowhere.json" and "could not be read" in missing[0].reason
    big = tmp_path / "big.json"
    big.write_text("[" + " " * 2000 + "]")
    assert read_file(big, ImportLimits(max_file_bytes=1000)) == [
        ImportProblem("big.json", "It is larger than 1 MB.")
    ]


def test_reader_reports_how_far_it_has_read() -> None:
    reader = ImportReader(FIXTURES / "chatgpt_conversations.json")
    fractions = [reader.fraction for _ in reader]
    assert fractions[-1] == 1.0 and all(f is not None for f in fractions)
