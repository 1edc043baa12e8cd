"""A tiny random-weight llama as a GGUF file, made with the ``gguf`` package (a few hundred KB).

Enough for the protocol: a real header (architecture, context window, chat template, layer
and head counts) and real tensors of a two-layer model; the weights mean nothing.
"""

from __future__ import annotations

from pathlib import Path

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

    def tensor(name: str, *shape: int) -> None:
        writer.add_tensor(name, rng.standard_normal(shape, dtype=np.float32) * 0.02)

    tensor("token_embd.weight", vocab, dim)
    tensor("output_norm.weight", dim)
    tensor("output.weight", vocab, dim)
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
