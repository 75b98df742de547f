"""Embedding models behind one protocol (`base.Embedder`); `backends.create_embedder` picks the
backend that the settings name."""
