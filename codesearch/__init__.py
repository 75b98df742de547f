"""codesearch: local code search (tree-sitter chunks, BM25, vectors and a call graph, fused)."""

import os as _os

__version__ = "0.1.0"

# Set before anything imports transformers, sentence-transformers or Chroma, whichever entry point
# or thread gets there first: models load offline and quietly, and nothing phones home.
for _name, _value in (("HF_HUB_OFFLINE", "1"), ("TRANSFORMERS_OFFLINE", "1"), ("HF_HUB_DISABLE_PROGRESS_BARS", "1"),
                      ("TRANSFORMERS_VERBOSITY", "error"), ("TOKENIZERS_PARALLELISM", "false"),
                      ("ANONYMIZED_TELEMETRY", "False")):
    _os.environ.setdefault(_name, _value)
