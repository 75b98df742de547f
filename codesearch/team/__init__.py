"""The team store: many repositories and branches in one Milvus store (Milvus Lite, a server or a
cluster), written by stateless indexers and searched through codesearch's own ranking."""
