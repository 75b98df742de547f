"""TSX: TypeScript with JSX; same definitions as TypeScript."""

from . import LanguageSpec
from .typescript import SPEC as TS

SPEC = LanguageSpec(
    name="tsx",
    extensions=(".tsx",),
    wrapper_types=TS.wrapper_types,
    block_types=TS.block_types,
    query=TS.query,
)
