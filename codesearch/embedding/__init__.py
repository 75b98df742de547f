"""Embedding models behind one protocol (`base.Embedder`); `registry.create_embedder` picks the
backend that the settings name."""
