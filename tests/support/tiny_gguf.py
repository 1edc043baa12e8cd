"""A tiny random-weight llama as a GGUF file, made with the ``gguf`` package (a few hundred KB).

Enough for the protocol and for llama.cpp to load and run it: a real header (architecture,
context window, chat template, layer and head counts), a SentencePiece-style vocabulary (the
three special tokens, the 256 byte tokens llama.cpp falls back to, then plain pieces) and real
tensors of a two-layer model; the weights mean nothing, so replies are random tokens.
"""

from __future__ import annotations

from pathlib import Path

SPECIAL_AND_BYTES = 3 + 256
"""``<unk> <s> </s>`` and the byte tokens, before the plain pieces in the vocabulary."""
CHAT_TEMPLATE = "{% for m in messages %}<|{{ m.role }}|>{{ m.content }}\n{% endfor %}<|assistant|>"


def make_tiny_gguf(path: Path, *, context: int = 4096, seed: int = 0, vocab: int = 512) -> Path:
    """Write the model to ``path``; ``seed`` changes the weights (and so the SHA-256)."""
    import gguf
    import numpy as np

    rng = np.random.default_rng(seed)
    dim, layers, heads, kv_heads, ffn = 64, 2, 4, 2, 128
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_name("tiny-llama")
    writer.add_context_length(context)
    writer.add_embedding_length(dim)
    writer.add_block_count(layers)
    writer.add_feed_forward_length(ffn)
    writer.add_head_count(heads)
    writer.add_head_count_kv(kv_heads)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_chat_template(CHAT_TEMPLATE)
    _add_vocab(writer, vocab)

    def tensor(name: str, *shape: int) -> None:
        writer.add_tensor(name, rng.standard_normal(shape, dtype=np.float32) * 0.02)

    tensor("token_embd.weight", vocab, dim)
    writer.add_tensor("output_norm.weight", np.ones(dim, dtype=np.float32))
    # Only plain pieces get a say in the next token: the special and byte tokens' rows are zero,
    # the pieces' rows large, so a reply is words at once (a byte token alone is no text, and the
    # runtime holds back bytes that do not yet make UTF-8) and never ends early.
    output = rng.standard_normal((vocab, dim), dtype=np.float32)
    output[:SPECIAL_AND_BYTES] = 0.0
    writer.add_tensor("output.weight", output)
    head_dim = dim // heads
    for i in range(layers):
        tensor(f"blk.{i}.attn_norm.weight", dim)
        tensor(f"blk.{i}.attn_q.weight", dim, dim)
        tensor(f"blk.{i}.attn_k.weight", kv_heads * head_dim, dim)
        tensor(f"blk.{i}.attn_v.weight", kv_heads * head_dim, dim)
        tensor(f"blk.{i}.attn_output.weight", dim, dim)
        tensor(f"blk.{i}.ffn_norm.weight", dim)
        tensor(f"blk.{i}.ffn_gate.weight", ffn, dim)
        tensor(f"blk.{i}.ffn_up.weight", ffn, dim)
        tensor(f"blk.{i}.ffn_down.weight", dim, ffn)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def _add_vocab(writer: object, size: int) -> None:
    """``<unk> <s> </s>``, the byte tokens ``<0x00>``…``<0xFF>``, then pieces ``▁a``, ``▁b``…"""
    import gguf

    tokens = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)]
    kinds = [gguf.TokenType.UNKNOWN, gguf.TokenType.CONTROL, gguf.TokenType.CONTROL]
    kinds += [gguf.TokenType.BYTE] * 256
    letters = "abcdefghijklmnopqrstuvwxyz"
    i = 0
    while len(tokens) < size:
        piece = letters[i % 26] + (letters[i // 26 % 26] if i >= 26 else "")
        tokens.append("\u2581" + piece)
        kinds.append(gguf.TokenType.NORMAL)
        i += 1
    w = writer  # a GGUFWriter
    w.add_tokenizer_model("llama")  # type: ignore[attr-defined]
    w.add_token_list(tokens)  # type: ignore[attr-defined]
    w.add_token_scores([-float(n) for n in range(len(tokens))])  # type: ignore[attr-defined]
    w.add_token_types([int(k) for k in kinds])  # type: ignore[attr-defined]
    w.add_unk_token_id(0)  # type: ignore[attr-defined]
    w.add_bos_token_id(1)  # type: ignore[attr-defined]
    w.add_eos_token_id(2)  # type: ignore[attr-defined]
    w.add_add_bos_token(True)  # type: ignore[attr-defined]
