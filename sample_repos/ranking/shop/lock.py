"""Pinned versions of the shop's suppliers."""


def write(path, versions):
    """Write the pinned versions."""
    with open(path, "w") as handle:
        for name, version in versions.items():
            handle.write(f"{name}=={version}\n")
